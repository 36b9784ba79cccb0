"""The CRD schema generator, on a small CRD, and the committed output it wrote."""

from __future__ import annotations

import json

import pytest
from scripts.generate_crd_schemas import OUTPUT, SOURCES, Source, crd_schemas, strip_descriptions

CRD = """\
apiVersion: v1
kind: ServiceAccount
metadata: {name: not-a-crd}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trainjobs.example.org}
spec:
  group: example.org
  names: {kind: TrainJob}
  versions:
  - name: v1
    served: true
    schema:
      openAPIV3Schema:
        description: A training job.
        type: object
        properties:
          description: {type: string, description: the job's own description field}
          spec:
            type: object
            required: [replicas]
            properties:
              replicas: {type: integer, description: how many}
  - name: v0
    served: false
    schema: {openAPIV3Schema: {type: object}}
"""
SOURCE = Source("trainjobs.yaml", "github.com/example/op", "crds/trainjobs.yaml", "abc123")


def test_served_versions_are_kept_without_descriptions_and_with_their_source() -> None:
    assert crd_schemas(CRD, SOURCE) == {
        "example.org/v1/TrainJob": {
            "crd": "trainjobs.example.org",
            "source": {
                "repo": "github.com/example/op",
                "path": "crds/trainjobs.yaml",
                "commit": "abc123",
            },
            "schema": {
                "type": "object",
                "properties": {
                    "description": {"type": "string"},  # a field named description stays
                    "spec": {
                        "type": "object",
                        "required": ["replicas"],
                        "properties": {"replicas": {"type": "integer"}},
                    },
                },
            },
        }
    }


def test_a_file_without_a_crd_is_an_error() -> None:
    with pytest.raises(SystemExit, match="no CustomResourceDefinition"):
        crd_schemas("apiVersion: v1\nkind: ConfigMap\n", SOURCE)


def test_the_committed_schemas_name_their_sources_and_hold_no_description() -> None:
    schemas = json.loads(OUTPUT.read_text(encoding="utf-8"))
    assert set(schemas) == {
        "batch.volcano.sh/v1alpha1/Job",
        "kubeflow.org/v1/PyTorchJob",
        "mindxdl.gitee.com/v1/AscendJob",
    }
    recorded = {(e["source"]["repo"], e["source"]["path"]) for e in schemas.values()}
    assert recorded == {(s.repo, s.path) for s in SOURCES}
    for entry in schemas.values():
        assert strip_descriptions(entry["schema"]) == entry["schema"]
        assert "replicas" in json.dumps(entry["schema"])
