"""Generate the schemas the tests validate ascendify's Kubernetes manifests against.

Volcano's Job, Kubeflow's PyTorchJob and MindCluster's AscendJob are custom resources: the cluster
checks them against the ``openAPIV3Schema`` of their CustomResourceDefinition. This script reads
each CRD file (as published by its project, at the commit named in ``SOURCES``), keeps the served
version's schema with every ``description`` dropped (they are most of the bytes), and writes one
JSON file that records, per kind, the source repository, path and commit it came from. The output
is committed; the CRD files are not, and the tests never need them.

Usage::

    python scripts/generate_crd_schemas.py DIR    # DIR holds the files named as in SOURCES
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

OUTPUT = Path(__file__).resolve().parents[1] / "tests" / "launch" / "schemas" / "crds.json"


@dataclass(frozen=True)
class Source:
    file: str  # the file's name in DIR (its name in the repository)
    repo: str
    path: str
    commit: str


SOURCES = (
    Source(
        "batch.volcano.sh_jobs.yaml",
        "github.com/volcano-sh/volcano",
        "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml",
        "ed72c7c815a9fd547a787134676f73d42e9d049c",
    ),
    Source(  # the v1 API's last release before it moved to the Trainer v2 API
        "kubeflow.org_pytorchjobs.yaml",
        "github.com/kubeflow/training-operator",
        "manifests/base/crds/kubeflow.org_pytorchjobs.yaml",
        "374e88af2",
    ),
    Source(  # the operator's install manifest (the CRD is one of its documents), from a mirror
        "ascend-operator.yaml",  # of github.com/Ascend/mind-cluster
        "github.com/xiaobingling93-pixel/Ascend-mind-cluster",
        "component/ascend-operator/build/ascend-operator.yaml",
        "c7632a1a7639ceb2cb702bbd5990be5e5fd59766",
    ),
)


def strip_descriptions(schema: Any) -> Any:
    """The schema without ``description`` keywords; a property *named* description stays."""
    if isinstance(schema, list):
        return [strip_descriptions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    stripped: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description" and isinstance(value, str):
            continue
        if key in ("properties", "patternProperties", "definitions"):
            stripped[key] = {name: strip_descriptions(sub) for name, sub in value.items()}
        else:
            stripped[key] = strip_descriptions(value)
    return stripped


def crd_schemas(text: str, source: Source) -> dict[str, Any]:
    """``apiVersion/kind`` -> the entry of each served version of each CRD in one file."""
    entries: dict[str, Any] = {}
    for document in yaml.safe_load_all(text):
        if not isinstance(document, dict) or document.get("kind") != "CustomResourceDefinition":
            continue
        spec = document["spec"]
        for version in spec["versions"]:
            if not version.get("served"):
                continue
            api_version = f"{spec['group']}/{version['name']}"
            entries[f"{api_version}/{spec['names']['kind']}"] = {
                "crd": document["metadata"]["name"],
                "source": {key: value for key, value in asdict(source).items() if key != "file"},
                "schema": strip_descriptions(version["schema"]["openAPIV3Schema"]),
            }
    if not entries:
        raise SystemExit(f"{source.file}: no CustomResourceDefinition in it")
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("crd_dir", type=Path, help="folder with the CRD files named in SOURCES")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    schemas: dict[str, Any] = {}
    for source in SOURCES:
        text = (args.crd_dir / source.file).read_text(encoding="utf-8")
        schemas.update(crd_schemas(text, source))
    args.output.write_text(
        json.dumps(schemas, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    print(f"{args.output}: {', '.join(sorted(schemas))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
