"""Runs Determined's launcher (determined.exec.launch) with its log masking widened.

The launcher logs the trial's whole config with determined.util.mask_config_dict, which hides an
S3 storage's access_key and secret_key but not an Azure storage's connection_string or credential;
the task log would keep them. This masks those too, then runs the launcher as `python3 -m` would.
"""

import runpy

import determined.util as det_util

_MASK = "********"
_original_mask = det_util.mask_checkpoint_storage


def _mask_checkpoint_storage(storage):
    masked = _original_mask(storage)
    for key in ("connection_string", "credential"):
        if masked.get(key):
            masked[key] = _MASK
    url = masked.get("account_url")
    if isinstance(url, str) and "?" in url:  # a SAS token in the query
        masked["account_url"] = url.split("?", 1)[0] + "?" + _MASK
    return masked


det_util.mask_checkpoint_storage = _mask_checkpoint_storage

if __name__ == "__main__":
    runpy.run_module("determined.exec.launch", run_name="__main__", alter_sys=True)
