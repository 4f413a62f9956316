//! Generates the Remote Workers API client (google.devtools.remoteworkers.v1test2) from the
//! vendored descriptor set (proto/README.md says where it comes from). google.protobuf's
//! Any/Empty/Timestamp and google.rpc map to bazel-remote-apis' types, so an `Any` holding an ActionResult is the
//! same Rust type the REAPI client uses.

use prost::Message;

fn main() -> std::io::Result<()> {
    let path = "proto/remoteworkers_v1test2.binpb";
    println!("cargo:rerun-if-changed={path}");
    let fds = prost_types::FileDescriptorSet::decode(std::fs::read(path)?.as_slice())?;
    tonic_prost_build::configure()
        .build_server(false)
        // Without this prost maps all of google.protobuf to prost-types; the paths below
        // pick bazel-remote-apis' Any (the type its Operation and REAPI messages use).
        .compile_well_known_types(true)
        .extern_path(
            ".google.protobuf.Any",
            "::bazel_remote_apis::google::protobuf::Any",
        )
        .extern_path(
            ".google.protobuf.Empty",
            "::bazel_remote_apis::google::protobuf::Empty",
        )
        .extern_path(
            ".google.protobuf.Timestamp",
            "::bazel_remote_apis::google::protobuf::Timestamp",
        )
        // bazel-remote-apis has no FieldMask; prost-types' is the same message.
        .extern_path(".google.protobuf.FieldMask", "::prost_types::FieldMask")
        .extern_path(".google.rpc", "::bazel_remote_apis::google::rpc")
        .compile_fds(fds)
}
