# Intentionally empty: nothing is implicit in this workspace.
