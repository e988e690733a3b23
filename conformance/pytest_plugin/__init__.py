"""The pytest plugin (entry point `conformance.pytest_plugin.plugin`): case files as items, the
controller's accounting, the guard around each item, and hookspecs for other plugins."""
