//! Partitioning of FINN dataflow graphs across FPGAs.
