"""The FoodMart sample: its build script (``build.py``, standard library only) and cube model (``cube.yaml``).

The database is not shipped (5 MB): :func:`evalnb.examples.foodmart_db` builds it on first use into the user
cache folder, with ``cube.yaml`` beside it, and returns its path (``README.md`` here says what is real in it).
"""
