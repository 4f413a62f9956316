//! Nothing here: the package holds the deployment graph's tests (`tests/`), which drive the
//! `forge` binary `//deploy:caching` builds over scratch copies of the project.
