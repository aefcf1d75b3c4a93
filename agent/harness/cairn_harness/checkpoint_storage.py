"""Where a cairn_harness trial's checkpoints live: a directory of the shared file system, or an
object store (S3, Azure Blob) written through its SDK in Determined's layout, so the master,
Determined's CLI and Determined's package all find them: S3 keys "<prefix>/<uuid>/<path>",
Azure blobs "<uuid>/<path>". An object-store checkpoint is saved into a scratch directory and
uploaded, and downloaded into one to resume."""

import contextlib
import os
import shutil
import tempfile

from cairn_harness.master_client import HarnessError


def open_storage(trial_doc):
    """The storage the master's trial description names (checkpointStorage, else
    checkpointDir)."""
    storage = trial_doc.get("checkpointStorage") or {}
    kind = storage.get("type", "shared_fs")
    if kind == "shared_fs":
        return DirectoryStorage(trial_doc.get("checkpointDir") or "")
    if kind == "s3":
        return S3Storage(storage)
    if kind == "azure":
        return AzureStorage(storage)
    raise HarnessError(f"checkpoint storage of type {kind!r} is not supported")


def _files(directory):
    """{relative path: size} of the regular files under `directory`."""
    resources = {}
    for root, _, files in os.walk(directory):
        for name in files:
            full = os.path.join(root, name)
            relative = os.path.relpath(full, directory).replace(os.sep, "/")
            resources[relative] = os.lstat(full).st_size
    return resources


class DirectoryStorage:
    def __init__(self, root):
        self.event_root = root  # TensorBoard event files go beside the checkpoints
        self._root = root

    def _path(self, checkpoint_uuid):
        if not self._root or not os.path.isabs(self._root):
            raise HarnessError(f"checkpointDir {self._root!r} is not an absolute path")
        return os.path.join(self._root, checkpoint_uuid)

    def save(self, checkpoint_uuid, write):
        path = self._path(checkpoint_uuid)
        os.makedirs(path)
        try:
            write(path)
        except BaseException:
            # Never reported, so nobody would collect it.
            shutil.rmtree(path, ignore_errors=True)
            raise
        return _files(path)

    @contextlib.contextmanager
    def restored(self, checkpoint_uuid):
        yield self._path(checkpoint_uuid)


class _ObjectStorage:
    event_root = ""  # no TensorBoard event files in an object store yet

    def save(self, checkpoint_uuid, write):
        scratch = tempfile.mkdtemp(prefix="cairn-checkpoint-")
        uploaded = []
        try:
            write(scratch)
            resources = _files(scratch)
            for relative in sorted(resources):
                name = f"{checkpoint_uuid}/{relative}"
                self._upload(os.path.join(scratch, relative), name)
                uploaded.append(name)
            return resources
        except BaseException:
            # Never reported, so nobody would collect what did arrive: take it back, as far as
            # the store lets us.
            for name in uploaded:
                with contextlib.suppress(Exception):
                    self._delete(name)
            raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    @contextlib.contextmanager
    def restored(self, checkpoint_uuid):
        """The checkpoint downloaded into a scratch directory, removed once the trial's load()
        returns (as Determined's restore_path does): load() must read what it needs."""
        scratch = tempfile.mkdtemp(prefix="cairn-restore-")
        try:
            found = 0
            for name in self._names(f"{checkpoint_uuid}/"):
                relative = name[len(checkpoint_uuid) + 1:]
                if not relative or relative.endswith("/"):
                    continue
                target = os.path.realpath(os.path.join(scratch, relative))
                if not target.startswith(os.path.realpath(scratch) + os.sep):
                    raise HarnessError(f"checkpoint {checkpoint_uuid} holds a path outside "
                                       f"itself: {relative!r}")
                os.makedirs(os.path.dirname(target), exist_ok=True)
                self._download(name, target)
                found += 1
            if found == 0:
                raise HarnessError(f"checkpoint {checkpoint_uuid} has no objects in storage")
            yield scratch
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


class S3Storage(_ObjectStorage):
    def __init__(self, config):
        try:
            import boto3
        except ImportError as e:
            raise HarnessError("checkpoint storage s3 needs boto3 in the trial's environment "
                               "(Debian: python3-boto3)") from e
        self._bucket = config["bucket"]
        prefix = (config.get("prefix") or "").strip("/")
        self._prefix = prefix + "/" if prefix else ""
        self._client = boto3.client("s3", endpoint_url=config.get("endpoint_url"),
                                    aws_access_key_id=config.get("access_key"),
                                    aws_secret_access_key=config.get("secret_key"))

    def _upload(self, path, name):
        self._client.upload_file(path, self._bucket, self._prefix + name)

    def _names(self, start):
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self._bucket, Prefix=self._prefix + start)
        for page in pages:
            for entry in page.get("Contents", []):
                yield entry["Key"][len(self._prefix):]

    def _download(self, name, target):
        self._client.download_file(self._bucket, self._prefix + name, target)

    def _delete(self, name):
        self._client.delete_object(Bucket=self._bucket, Key=self._prefix + name)


class AzureStorage(_ObjectStorage):
    def __init__(self, config):
        try:
            from azure.core.exceptions import ResourceExistsError
            from azure.storage.blob import BlobServiceClient
        except ImportError as e:
            raise HarnessError("checkpoint storage azure needs Azure's SDK in the trial's "
                               "environment (Debian: python3-azure-storage)") from e
        if config.get("connection_string"):
            service = BlobServiceClient.from_connection_string(config["connection_string"])
        else:
            service = BlobServiceClient(config["account_url"], credential=config.get("credential"))
        self._container = service.get_container_client(config["container"])
        with contextlib.suppress(ResourceExistsError):
            self._container.create_container()

    def _upload(self, path, name):
        with open(path, "rb") as data:
            self._container.upload_blob(name, data, overwrite=True)

    def _names(self, start):
        for blob in self._container.list_blobs(name_starts_with=start):
            yield blob.name

    def _download(self, name, target):
        with open(target, "wb") as out:
            self._container.download_blob(name).readinto(out)

    def _delete(self, name):
        self._container.delete_blob(name)
