CELL_TEXT = "extra cell"
