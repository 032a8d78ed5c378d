"""A thin, read-only wrapper over the official ``kubernetes`` client.

Every call goes through the client's typed API methods (so the requests are
exactly the ones the official client makes) with ``_preload_content=False``:
the raw JSON is decoded here and parsed by pure functions, which is both
faster than building model objects and testable with hostile input.  The only
writes are SelfSubject*Review (queries by design) and pod creates with
``dryRun=All``, which the server admits or refuses without persisting.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Any

#: Seconds for one API call (connect, read).
TIMEOUT = (5.0, 20.0)
#: Page size for lists, so a large cluster is read in bounded chunks.
PAGE = 500
#: A server that keeps answering "continue" is not followed past this.
MAX_PAGES = 1000


class K8sUnavailable(Exception):
    """No usable cluster: no client library, no kubeconfig, or no such context."""


@dataclass(frozen=True)
class Answer:
    """One API call: the decoded body, or the HTTP status and message."""

    status: int | None
    data: Any = None
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and self.data is not None

    @property
    def unreachable(self) -> bool:
        return self.status is None


class K8sClient:
    """The calls the collector makes, each answering an :class:`Answer`."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None) -> None:
        try:
            # Imported by name so the audit path (and mypy, which has no stubs
            # for it) never depends on the optional package.
            client: Any = importlib.import_module("kubernetes.client")
            config: Any = importlib.import_module("kubernetes.config")
        except ImportError as exc:  # the optional extra is not installed
            raise K8sUnavailable(
                "the kubernetes package is not installed: pip install 'clustergrade[k8s]'"
            ) from exc
        try:
            contexts, active = config.list_kube_config_contexts(config_file=kubeconfig)
            chosen = active
            if context is not None:
                chosen = next((c for c in contexts if c.get("name") == context), None)
                if chosen is None:
                    raise K8sUnavailable(f"no context {context!r} in the kubeconfig")
            self.api_client = config.new_client_from_config(config_file=kubeconfig, context=context)
        except K8sUnavailable:
            raise
        except Exception as exc:  # ConfigException, YAML errors, missing file
            raise K8sUnavailable(f"cannot load kubeconfig: {exc}") from exc
        ctx = (chosen or {}).get("context") or {}
        self.context: str | None = (chosen or {}).get("name")
        self.namespace: str = ctx.get("namespace") or "default"
        self.user: str | None = ctx.get("user")
        self.server: str = self.api_client.configuration.host
        self._client = client

    def close(self) -> None:
        self.api_client.close()

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Answer:
        api_exception: Any = importlib.import_module("kubernetes.client.exceptions").ApiException
        try:
            resp = method(*args, _preload_content=False, _request_timeout=TIMEOUT, **kwargs)
        except api_exception as exc:
            return Answer(exc.status or None, None, _status_message(exc.body) or str(exc.reason))
        except Exception as exc:  # urllib3 connection and TLS errors
            return Answer(None, None, f"{type(exc).__name__}: {exc}")
        try:
            return Answer(resp.status, json.loads(resp.data))
        except ValueError as exc:
            return Answer(resp.status, None, f"not JSON: {exc}")

    def _list(self, method: Any, *args: Any) -> Answer:
        """Every page of a list, merged into one list object."""
        items: list[Any] = []
        token: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            kw: dict[str, Any] = {"limit": PAGE}
            if token:
                kw["_continue"] = token
            a = self._call(method, *args, **kw)
            if not a.ok or not isinstance(a.data, dict):
                return a
            page = a.data.get("items")
            if page is not None and not isinstance(page, list):
                return a  # malformed: the parser reports it
            items.extend(page or [])
            meta = a.data.get("metadata")
            token = meta.get("continue") if isinstance(meta, dict) else None
            if not token or not isinstance(token, str):
                return Answer(a.status, {**a.data, "items": items})
            if token in seen:
                return Answer(None, None, "the server repeated a continue token")
            seen.add(token)
        return Answer(None, None, f"more than {MAX_PAGES} pages")

    # -- reads ---------------------------------------------------------------
    def version(self) -> Answer:
        return self._call(self._client.VersionApi(self.api_client).get_code)

    def api_groups(self) -> Answer:
        return self._call(self._client.ApisApi(self.api_client).get_api_versions)

    def nodes(self) -> Answer:
        return self._list(self._client.CoreV1Api(self.api_client).list_node)

    def namespaces(self) -> Answer:
        return self._list(self._client.CoreV1Api(self.api_client).list_namespace)

    def pods_all_namespaces(self) -> Answer:
        """One pod at most: whether this identity can see every namespace's pods."""
        api = self._client.CoreV1Api(self.api_client)
        return self._call(api.list_pod_for_all_namespaces, limit=1)

    def workloads(self, kind: str) -> Answer:
        api = self._client.AppsV1Api(self.api_client)
        method = {
            "DaemonSet": api.list_daemon_set_for_all_namespaces,
            "Deployment": api.list_deployment_for_all_namespaces,
            "StatefulSet": api.list_stateful_set_for_all_namespaces,
        }[kind]
        return self._list(method)

    def storage_classes(self) -> Answer:
        return self._list(self._client.StorageV1Api(self.api_client).list_storage_class)

    def network_policies(self, namespace: str | None = None) -> Answer:
        api = self._client.NetworkingV1Api(self.api_client)
        if namespace is None:
            return self._list(api.list_network_policy_for_all_namespaces)
        return self._list(api.list_namespaced_network_policy, namespace)

    # -- queries that the API models as creates --------------------------------
    def self_subject_review(self) -> Answer:
        api = self._client.AuthenticationV1Api(self.api_client)
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        return self._call(api.create_self_subject_review, body)

    def self_subject_rules_review(self, namespace: str) -> Answer:
        api = self._client.AuthorizationV1Api(self.api_client)
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": namespace},
        }
        return self._call(api.create_self_subject_rules_review, body)

    def dry_run_pod(self, namespace: str, pod: dict[str, Any]) -> Answer:
        """Create ``pod`` with dryRun=All: admitted or refused, never persisted."""
        api = self._client.CoreV1Api(self.api_client)
        return self._call(api.create_namespaced_pod, namespace, pod, dry_run="All")


def _status_message(body: Any) -> str | None:
    """The message of a metav1.Status error body, if it is one."""
    if not body:
        return None
    try:
        doc = json.loads(body)
    except (ValueError, TypeError):
        return str(body)[:500]
    if isinstance(doc, dict) and isinstance(doc.get("message"), str):
        return str(doc["message"])
    return str(body)[:500]
