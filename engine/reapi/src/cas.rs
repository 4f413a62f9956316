//! CAS traffic: FindMissingBlobs, batched small blobs, ByteStream for large ones (streamed
//! from and to disk, hashed on the way, resumable on retry).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::bytestream::{QueryWriteStatusRequest, ReadRequest, WriteRequest};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

use crate::digest::StreamingDigest;
use crate::error::RemoteError;
use crate::session::Inner;
use crate::transport::{is_transient, status_detail, unary, BATCH_OVERHEAD};
use crate::Digest;

/// ByteStream chunk: well under gRPC's 4 MiB default message limit on every server.
const CHUNK: usize = 1 << 20;
/// A stalled transfer is one that moves less than this; it bounds a whole upload's deadline.
const MIN_RATE_BYTES_PER_SEC: u64 = 4 << 20;
const FIND_MISSING_BATCH: usize = 4096;

/// Where the bytes of a blob to upload come from.
#[derive(Clone)]
pub enum BlobSource {
    Bytes(Arc<Vec<u8>>),
    File(PathBuf),
}

impl Inner {
    pub(crate) fn fits_batch(&self, size: i64) -> bool {
        (size as usize).saturating_add(BATCH_OVERHEAD / 16) <= self.batch_limit
    }

    pub(crate) async fn find_missing(&self, digests: &[Digest]) -> Result<Vec<Digest>> {
        let mut wanted: Vec<Digest> = digests
            .iter()
            .filter(|d| !d.is_empty_blob())
            .cloned()
            .collect();
        wanted.sort_by(|a, b| a.hash.cmp(&b.hash));
        wanted.dedup();
        let mut missing = Vec::new();
        for chunk in wanted.chunks(FIND_MISSING_BATCH) {
            let req = re::FindMissingBlobsRequest {
                instance_name: self.cfg.instance_name.clone(),
                blob_digests: chunk.iter().map(Digest::to_proto).collect(),
                digest_function: 0,
            };
            let client = self.clients.cas.clone();
            let resp = unary(&self.health, &self.opts, "FindMissingBlobs", || {
                let mut c = client.clone();
                let r = req.clone();
                async move { c.find_missing_blobs(r).await }
            })
            .await?;
            for d in &resp.missing_blob_digests {
                missing.push(Digest::from_proto(Some(d))?);
            }
        }
        Ok(missing)
    }

    /// Uploads the given blobs that the server lacks: small ones batched under the server's
    /// batch limit, large ones through ByteStream.
    pub(crate) async fn upload_blobs(&self, blobs: Vec<(Digest, BlobSource)>) -> Result<()> {
        let digests: Vec<Digest> = blobs.iter().map(|(d, _)| d.clone()).collect();
        let mut missing = self.find_missing(&digests).await?;
        {
            let corrupt = self
                .corrupt_on_server
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            missing.extend(digests.iter().filter(|d| corrupt.contains(*d)).cloned());
        }
        let mut batch: Vec<re::batch_update_blobs_request::Request> = Vec::new();
        let mut batch_bytes = 0usize;
        let mut done = std::collections::HashSet::new();
        for (digest, source) in blobs {
            if !missing.contains(&digest) || !done.insert(digest.clone()) {
                continue;
            }
            if !self.fits_batch(digest.size_bytes) {
                self.bytestream_write(&digest, source).await?;
                continue;
            }
            let data = match source {
                BlobSource::Bytes(b) => b.as_ref().clone(),
                BlobSource::File(p) => std::fs::read(&p)
                    .with_context(|| format!("reading {} for upload", p.display()))?,
            };
            if Digest::of_bytes(&data) != digest {
                anyhow::bail!("blob {digest} changed on disk while it was being uploaded");
            }
            let size = data.len() + 128;
            if batch_bytes + size > self.batch_limit - BATCH_OVERHEAD.min(self.batch_limit / 2)
                && !batch.is_empty()
            {
                self.batch_update(std::mem::take(&mut batch)).await?;
                batch_bytes = 0;
            }
            batch_bytes += size;
            batch.push(re::batch_update_blobs_request::Request {
                digest: Some(digest.to_proto()),
                data,
                compressor: 0,
            });
        }
        if !batch.is_empty() {
            self.batch_update(batch).await?;
        }
        Ok(())
    }

    async fn batch_update(
        &self,
        requests: Vec<re::batch_update_blobs_request::Request>,
    ) -> Result<()> {
        let req = re::BatchUpdateBlobsRequest {
            instance_name: self.cfg.instance_name.clone(),
            requests,
            digest_function: 0,
        };
        let client = self.clients.cas.clone();
        let resp = unary(&self.health, &self.opts, "BatchUpdateBlobs", || {
            let mut c = client.clone();
            let r = req.clone();
            async move { c.batch_update_blobs(r).await }
        })
        .await?;
        for r in resp.responses {
            if let Some(st) = r.status.filter(|s| s.code != 0) {
                let d = r.digest.map(|d| d.hash).unwrap_or_default();
                anyhow::bail!(
                    "remote cache refused blob {d} in BatchUpdateBlobs: code {}: {}",
                    st.code,
                    st.message
                );
            }
        }
        Ok(())
    }

    fn write_resource(&self, upload_id: &uuid::Uuid, d: &Digest) -> String {
        let prefix = instance_prefix(&self.cfg.instance_name);
        format!(
            "{prefix}uploads/{upload_id}/blobs/{}/{}",
            d.hash, d.size_bytes
        )
    }

    fn read_resource(&self, d: &Digest) -> String {
        let prefix = instance_prefix(&self.cfg.instance_name);
        format!("{prefix}blobs/{}/{}", d.hash, d.size_bytes)
    }

    /// ByteStream `Write` in CHUNK-sized messages read from disk as they are sent; on a
    /// transient failure it asks `QueryWriteStatus` where to resume, or restarts.
    pub(crate) async fn bytestream_write(&self, digest: &Digest, source: BlobSource) -> Result<()> {
        self.health.check()?;
        let mut upload_id = uuid::Uuid::new_v4();
        let mut offset = 0i64;
        let mut backoff = self.opts.initial_backoff;
        let mut attempt = 0u32;
        loop {
            let resource = self.write_resource(&upload_id, digest);
            let remaining = (digest.size_bytes - offset) as u64;
            let deadline =
                self.opts.call_timeout + Duration::from_secs(remaining / MIN_RATE_BYTES_PER_SEC);
            let (tx, rx) = tokio::sync::mpsc::channel::<WriteRequest>(4);
            let producer = tokio::spawn(produce_chunks(
                source.clone(),
                resource.clone(),
                offset,
                digest.size_bytes,
                tx,
            ));
            let mut bs = self.clients.bytestream.clone();
            let result = tokio::time::timeout(deadline, bs.write(ReceiverStream::new(rx))).await;
            producer.abort();
            let status = match result {
                Ok(Ok(resp)) => {
                    let committed = resp.into_inner().committed_size;
                    // A server may end early with the full size when it already has the blob.
                    if committed == digest.size_bytes {
                        self.health.success();
                        return Ok(());
                    }
                    tonic::Status::data_loss(format!(
                        "server committed {committed} of {} bytes",
                        digest.size_bytes
                    ))
                }
                Ok(Err(status)) => status,
                Err(_) => {
                    tonic::Status::deadline_exceeded(format!("no completion within {deadline:?}"))
                }
            };
            if let Ok(Err(e)) = producer.await.map_err(|_| ()) {
                // A read error on our side is not the server's fault: report it as is.
                return Err(e);
            }
            let permanent = !is_transient(status.code()) && status.code() != Code::DataLoss;
            let what = format!("ByteStream.Write of {digest}");
            self.retry_or_fail(what, &status, permanent, &mut attempt, &mut backoff)
                .await?;
            offset = self.resume_offset(&resource, digest).await;
            if offset == digest.size_bytes {
                return Ok(());
            }
            if offset == 0 {
                upload_id = uuid::Uuid::new_v4();
            }
        }
    }

    /// After a ByteStream call `what` broke with `status`: the error when the status is
    /// `permanent` or the retries are spent, otherwise `Ok` once the doubling backoff has passed.
    async fn retry_or_fail(
        &self,
        what: String,
        status: &tonic::Status,
        permanent: bool,
        attempt: &mut u32,
        backoff: &mut Duration,
    ) -> Result<()> {
        if permanent {
            self.health.success();
            return Err(RemoteError::Status {
                what,
                code: status.code(),
                message: status.message().to_string(),
            }
            .into());
        }
        if *attempt >= self.opts.max_retries {
            return Err(self
                .health
                .failure(format!(
                    "{what}: {:?}: {}",
                    status.code(),
                    status_detail(status)
                ))
                .into());
        }
        *attempt += 1;
        tokio::time::sleep(*backoff).await;
        *backoff *= 2;
        Ok(())
    }

    /// Where an interrupted upload may continue; 0 (a fresh upload) when the server does not
    /// implement `QueryWriteStatus` or does not know the upload.
    async fn resume_offset(&self, resource: &str, digest: &Digest) -> i64 {
        let mut bs = self.clients.bytestream.clone();
        let req = QueryWriteStatusRequest {
            resource_name: resource.to_string(),
        };
        match tokio::time::timeout(self.opts.call_timeout, bs.query_write_status(req)).await {
            Ok(Ok(resp)) => {
                let r = resp.into_inner();
                if r.complete {
                    digest.size_bytes
                } else {
                    r.committed_size.clamp(0, digest.size_bytes)
                }
            }
            _ => 0,
        }
    }

    /// A blob small enough to hold (Tree, stdout), verified against its digest.
    pub(crate) async fn read_blob(&self, digest: &Digest) -> Result<Vec<u8>> {
        if digest.is_empty_blob() {
            return Ok(Vec::new());
        }
        if self.fits_batch(digest.size_bytes) {
            return self.batch_read_one(digest).await;
        }
        let mut data = Vec::new();
        self.bytestream_read(digest, &mut data).await?;
        Ok(data)
    }

    async fn batch_read_one(&self, digest: &Digest) -> Result<Vec<u8>> {
        let req = re::BatchReadBlobsRequest {
            instance_name: self.cfg.instance_name.clone(),
            digests: vec![digest.to_proto()],
            acceptable_compressors: vec![],
            digest_function: 0,
        };
        let client = self.clients.cas.clone();
        let resp = unary(&self.health, &self.opts, "BatchReadBlobs", || {
            let mut c = client.clone();
            let r = req.clone();
            async move { c.batch_read_blobs(r).await }
        })
        .await?;
        let r = resp
            .responses
            .into_iter()
            .next()
            .context("BatchReadBlobs answered without a response")?;
        if let Some(st) = r.status.filter(|s| s.code != 0) {
            return Err(RemoteError::Status {
                what: format!("BatchReadBlobs of {digest}"),
                code: Code::from_i32(st.code),
                message: st.message,
            }
            .into());
        }
        let got = Digest::of_bytes(&r.data);
        if got != *digest {
            return Err(RemoteError::Corrupt {
                digest: digest.clone(),
                detail: format!("received {got}"),
            }
            .into());
        }
        Ok(r.data)
    }

    /// ByteStream `Read` into `sink`, hashed as it arrives; a broken stream resumes at the
    /// byte where it stopped.
    async fn bytestream_read(&self, digest: &Digest, sink: &mut (dyn Write + Send)) -> Result<()> {
        self.health.check()?;
        let mut hasher = StreamingDigest::new();
        let mut backoff = self.opts.initial_backoff;
        let mut attempt = 0u32;
        loop {
            let req = ReadRequest {
                resource_name: self.read_resource(digest),
                read_offset: hasher.size(),
                read_limit: 0,
            };
            let status = match self.read_stream(req, digest, &mut hasher, sink).await? {
                None => {
                    self.health.success();
                    let got = hasher.finish();
                    if got != *digest {
                        return Err(RemoteError::Corrupt {
                            digest: digest.clone(),
                            detail: format!("received {got}"),
                        }
                        .into());
                    }
                    return Ok(());
                }
                Some(status) => status,
            };
            let permanent = !is_transient(status.code());
            let what = format!("ByteStream.Read of {digest}");
            self.retry_or_fail(what, &status, permanent, &mut attempt, &mut backoff)
                .await?;
        }
    }

    /// One Read stream; `Ok(None)` when it ended normally, `Ok(Some(status))` when it broke.
    async fn read_stream(
        &self,
        req: ReadRequest,
        digest: &Digest,
        hasher: &mut StreamingDigest,
        sink: &mut (dyn Write + Send),
    ) -> Result<Option<tonic::Status>> {
        let idle = self.opts.call_timeout;
        let mut bs = self.clients.bytestream.clone();
        let mut stream = match tokio::time::timeout(idle, bs.read(req)).await {
            Ok(Ok(resp)) => resp.into_inner(),
            Ok(Err(status)) => return Ok(Some(status)),
            Err(_) => {
                return Ok(Some(tonic::Status::deadline_exceeded(format!(
                    "no answer within {idle:?}"
                ))))
            }
        };
        loop {
            match tokio::time::timeout(idle, stream.message()).await {
                Ok(Ok(Some(msg))) => {
                    if hasher.size() + msg.data.len() as i64 > digest.size_bytes {
                        return Err(RemoteError::Corrupt {
                            digest: digest.clone(),
                            detail: "the server sent more bytes than the digest's size".into(),
                        }
                        .into());
                    }
                    hasher.update(&msg.data);
                    sink.write_all(&msg.data)
                        .context("writing a downloaded blob")?;
                }
                Ok(Ok(None)) => return Ok(None),
                Ok(Err(status)) => return Ok(Some(status)),
                Err(_) => {
                    return Ok(Some(tonic::Status::deadline_exceeded(format!(
                        "stream stalled for {idle:?}"
                    ))))
                }
            }
        }
    }

    /// Downloads into a temporary file beside `dest`, verifies, then renames: `dest` is either
    /// absent/unchanged or holds exactly the blob.
    pub(crate) async fn fetch_to_file(&self, digest: &Digest, dest: &Path) -> Result<()> {
        let result = self.fetch_to_file_unrecorded(digest, dest).await;
        if let Err(e) = &result {
            if crate::is_corrupt(e) {
                self.corrupt_on_server
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(digest.clone());
            }
        }
        result
    }

    async fn fetch_to_file_unrecorded(&self, digest: &Digest, dest: &Path) -> Result<()> {
        let parent = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".forge-fetch-")
            .tempfile_in(parent)
            .with_context(|| format!("creating a temporary file in {}", parent.display()))?;
        if digest.is_empty_blob() {
            // Nothing to download; the empty blob needs no server.
        } else if self.fits_batch(digest.size_bytes) {
            let data = self.batch_read_one(digest).await?;
            tmp.write_all(&data)
                .with_context(|| format!("writing {}", tmp.path().display()))?;
        } else {
            let mut writer = std::io::BufWriter::with_capacity(CHUNK, tmp.as_file_mut());
            self.bytestream_read(digest, &mut writer).await?;
            writer
                .flush()
                .with_context(|| format!("writing {}", dest.display()))?;
        }
        tmp.persist(dest)
            .map_err(|e| e.error)
            .with_context(|| format!("renaming the download into {}", dest.display()))?;
        Ok(())
    }
}

fn instance_prefix(instance: &str) -> String {
    if instance.is_empty() {
        String::new()
    } else {
        format!("{instance}/")
    }
}

/// Feeds the Write stream from disk so at most a few chunks are in memory at any time.
async fn produce_chunks(
    source: BlobSource,
    resource: String,
    offset: i64,
    size: i64,
    tx: tokio::sync::mpsc::Sender<WriteRequest>,
) -> Result<()> {
    let mut pos = offset;
    let mut first = true;
    let send = |data: Vec<u8>, pos: i64, finish: bool, first: bool| {
        let tx = tx.clone();
        let resource = if first {
            resource.clone()
        } else {
            String::new()
        };
        async move {
            // A closed channel means the call already ended; its status tells why.
            tx.send(WriteRequest {
                resource_name: resource,
                write_offset: pos,
                finish_write: finish,
                data,
            })
            .await
            .is_ok()
        }
    };
    match source {
        BlobSource::Bytes(bytes) => {
            while pos < size {
                let end = (pos as usize + CHUNK).min(size as usize);
                let data = bytes[pos as usize..end].to_vec();
                if !send(data, pos, end as i64 == size, first).await {
                    return Ok(());
                }
                first = false;
                pos = end as i64;
            }
        }
        BlobSource::File(path) => {
            let mut file = tokio::fs::File::open(&path)
                .await
                .with_context(|| format!("opening {} for upload", path.display()))?;
            file.seek(std::io::SeekFrom::Start(pos as u64)).await?;
            while pos < size {
                let want = CHUNK.min((size - pos) as usize);
                let mut data = vec![0u8; want];
                file.read_exact(&mut data).await.with_context(|| {
                    format!("{} shrank while it was being uploaded", path.display())
                })?;
                let end = pos + want as i64;
                if !send(data, pos, end == size, first).await {
                    return Ok(());
                }
                first = false;
                pos = end;
            }
        }
    }
    Ok(())
}
