//! The jacobi application's host side (apps/jacobi/README.md): the kernel's cell layout,
//! the initial grid, the whole-grid reference, the modelled time per iteration, and the
//! program one MPI rank runs per card (`jacobi-host`, src/main.rs).

pub mod grid;
pub mod layout;
pub mod model;
pub mod reference;
