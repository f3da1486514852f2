"""raosym's version, in a module of its own (a leaf: it imports nothing).

Printed in the headers of every generated file and part of the render cache's key; the cache
and the emit stage read it from here, so that no stage imports the package root.
"""

__version__ = "0.1.0"
