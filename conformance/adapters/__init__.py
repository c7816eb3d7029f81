"""Adapters that present implementations to the kit. Only ``reference`` ships inside the kit."""
