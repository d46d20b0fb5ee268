"""The explorer's data functions (polars in) and chart builders (plotly out); pages stay thin."""
