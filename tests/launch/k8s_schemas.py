"""A manifest's problems as a cluster would find them when ``kubectl create -f`` sends it.

The custom resource itself (Volcano Job, PyTorchJob, AscendJob) is checked with jsonschema against
its CRD's openAPIV3Schema (``schemas/crds.json``, written by ``scripts/generate_crd_schemas.py``);
each pod template in it is checked by ``kubernetes-validate`` as the built-in core/v1 PodTemplate it
is. Both reject unknown fields, as kubectl's default strict field validation does.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate

CRDS = Path(__file__).parent / "schemas" / "crds.json"
KUBERNETES_VERSION = "1.31"  # the release the PyTorchJob CRD was generated for


@functools.cache
def _crd_validator(api_version: str, kind: str) -> jsonschema.Draft7Validator | None:
    entry = json.loads(CRDS.read_text(encoding="utf-8")).get(f"{api_version}/{kind}")
    if entry is None:
        return None
    return jsonschema.Draft7Validator(_strict(copy.deepcopy(entry["schema"])))


def _strict(schema: Any) -> Any:
    """Objects with listed properties take no others, unless the CRD keeps unknown fields."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    for key, value in schema.items():
        if key == "properties":
            schema[key] = {name: _strict(sub) for name, sub in value.items()}
        else:
            schema[key] = _strict(value)
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        schema["additionalProperties"] = False
    return schema


def _where(path: Any) -> str:
    return ".".join(str(part) for part in path) or "(top)"


def _pod_templates(manifest: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    spec = manifest.get("spec", {})
    for index, task in enumerate(spec.get("tasks", [])):  # Volcano
        yield f"spec.tasks.{index}.template", task.get("template")
    for field in ("pytorchReplicaSpecs", "replicaSpecs"):  # PyTorchJob, AscendJob
        for name, replica in spec.get(field, {}).items():
            yield f"spec.{field}.{name}.template", replica.get("template")


def problems(manifest: dict[str, Any]) -> list[str]:
    """Each problem as ``Kind path: message``; empty when the cluster would take the manifest."""
    kind = manifest.get("kind", "?")
    validator = _crd_validator(str(manifest.get("apiVersion")), str(kind))
    if validator is None:
        return [f"{kind}: no schema for apiVersion {manifest.get('apiVersion')!r}"]
    found = [
        f"{kind} {_where(error.absolute_path)}: {error.message}"
        for error in sorted(validator.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    ]
    for where, template in _pod_templates(manifest):
        pod_template = {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": "template"},
            "template": template,
        }
        try:
            kubernetes_validate.validate(pod_template, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            inner = list(error.path)[1:]  # below PodTemplate.template
            found.append(f"{kind} {where}{''.join(f'.{p}' for p in inner)}: {error.message}")
    return found
