"""The HTTP edge: one framework-neutral API module, thin server adapters."""
