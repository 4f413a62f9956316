//! Compiles the XRT exception barrier (csrc/xrt_shim.cpp) against Debian's libxrt-dev 2.13
//! and links libxrt_coreutil, the library holding XRT's C API.

fn main() {
    println!("cargo:rerun-if-changed=csrc/xrt_shim.cpp");
    let include = std::env::var("XRT_INCLUDE_DIR").unwrap_or_else(|_| "/usr/include/xrt".into());
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(&include)
        .file("csrc/xrt_shim.cpp")
        .compile("af_xrt_shim");
    println!("cargo:rustc-link-lib=dylib=xrt_coreutil");
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
