import sys

from joulebench.cli import main

sys.exit(main())
