"""prepared_features: the example's local package, installed into the prepared environment.

Polynomial features of a scalar, and the version the trial reports, so a test can see which build
of the package the trial imported.
"""

VERSION = "1.0"


def features(x, degree=2):
    """[1, x, x**2, ..., x**degree]."""
    return [x ** power for power in range(degree + 1)]
