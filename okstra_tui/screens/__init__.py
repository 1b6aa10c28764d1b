"""One screen per view of the workbench."""
