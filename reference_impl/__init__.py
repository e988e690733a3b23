"""Independent pure-Python reference for the five behaviours (public torch API only)."""
