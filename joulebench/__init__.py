"""JouleBench: throughput, joules per example and cost per sample of deep-learning hardware."""

__version__ = "0.1.0"
