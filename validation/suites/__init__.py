"""The validation suites shipped with perfci (``perfci validate list``)."""
