"""How an implementation is reached: the adapter named on the command line, loaded and checked.

- ``_loading``: :func:`~conformance.load_adapter`: ``reference``, an entry-point name, ``module:attr``,
  or ``cmd:<command>`` (a program over :mod:`conformance.stdio`); the declared capabilities checked
  against the methods before anything is asked.
- ``reference``: :class:`ReferenceAdapter`, the reference implementation behind the Protocol (the
  entry point ``reference``). The only module of the kit that imports :mod:`reference`.
"""
