"""What BuildGrid's own ActionCache holds, read with BuildGrid's client library: for each
Action digest (`hash/size`, one per line on stdin) one JSON line with `digest`, `found` and,
when found, `exit_code` and `outputs`: every output file's path and sha256 (`+x` appended for
an executable), a directory's files read from its Tree in BuildGrid's CAS.

Run with BuildGrid's interpreter: `.venv/buildgrid/bin/python buildgrid_ac.py ADDRESS`
(ADDRESS as `127.0.0.1:PORT`); the instance is BuildGrid's unnamed one.
"""

import hashlib
import json
import sys

import grpc
from buildgrid._protos.build.bazel.remote.execution.v2 import (
    remote_execution_pb2 as re,
)
from buildgrid._protos.build.bazel.remote.execution.v2 import (
    remote_execution_pb2_grpc as re_grpc,
)


def digest_of(text):
    hash_, size = text.split("/")
    return re.Digest(hash=hash_, size_bytes=int(size))


def read_blob(cas, digest):
    reply = cas.BatchReadBlobs(re.BatchReadBlobsRequest(digests=[digest]))
    (response,) = reply.responses
    if response.status.code != 0:
        raise SystemExit(f"BuildGrid has no blob {digest.hash}/{digest.size_bytes}")
    return response.data


def mark(file_node):
    return file_node.digest.hash + (" +x" if file_node.is_executable else "")


def tree_files(cas, path, tree_digest):
    tree = re.Tree()
    tree.ParseFromString(read_blob(cas, tree_digest))
    children = {}
    for child in tree.children:
        data = child.SerializeToString(deterministic=True)
        children[(hashlib.sha256(data).hexdigest(), len(data))] = child
    out = {path: "dir"}
    stack = [(tree.root, path)]
    while stack:
        directory, prefix = stack.pop()
        for f in directory.files:
            out[f"{prefix}/{f.name}"] = mark(f)
        for d in directory.directories:
            out[f"{prefix}/{d.name}"] = "dir"
            stack.append((children[(d.digest.hash, d.digest.size_bytes)], f"{prefix}/{d.name}"))
    return out


def main():
    channel = grpc.insecure_channel(sys.argv[1])
    ac = re_grpc.ActionCacheStub(channel)
    cas = re_grpc.ContentAddressableStorageStub(channel)
    for line in sys.stdin:
        text = line.strip()
        if not text:
            continue
        try:
            result = ac.GetActionResult(re.GetActionResultRequest(action_digest=digest_of(text)))
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.NOT_FOUND:
                raise
            print(json.dumps({"digest": text, "found": False}), flush=True)
            continue
        outputs = {f.path: mark(f) for f in result.output_files}
        for d in result.output_directories:
            outputs.update(tree_files(cas, d.path, d.tree_digest))
        row = {"digest": text, "found": True, "exit_code": result.exit_code, "outputs": outputs}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
