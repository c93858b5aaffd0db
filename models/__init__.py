"""PyMC model builders for perfci (installed as :mod:`perfci.models`)."""
