"""The job page's performance section: ``GET /api/jobs/<id>/perf``, ``ascendify perf``'s analysis
of a job submitted with ``--profile`` (``{"perf": null}`` until its ranks have written traces)."""

from __future__ import annotations

from flask import Flask, abort, jsonify
from flask.typing import ResponseReturnValue

from ascendify.errors import AscendifyError
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.store import JobStore


def add_perf_routes(app: Flask, store: JobStore) -> Flask:
    """``app`` with the route added."""

    @app.get("/api/jobs/<job_id>/perf")
    def api_perf(job_id: str) -> ResponseReturnValue:
        from ascendify.perf.jobs import job_profile_json

        try:
            job = store.get(job_id)
        except AscendifyError:
            abort(404, description=f"no job {job_id}")
        layout = JobLayout(store.job_dir(job.id), job.id)
        return jsonify({"job": job.id, "perf": job_profile_json(layout, job.nodes, job.cards)})

    return app
