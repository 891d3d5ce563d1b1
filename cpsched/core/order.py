"""Helpers about orders of a graph's ops. ``validate_order`` (whether an order is a
schedule of a graph) lives with the IR in ``cpsched.core.graph``, whose builder checks an
input's own order with it; it is re-exported here for the order helpers' users."""

from cpsched.core.graph import validate_order

__all__ = ["validate_order"]
