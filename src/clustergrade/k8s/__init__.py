"""Kubernetes audit through the API server (read-only; dry-run only).

Only :mod:`clustergrade.k8s.client` imports the official ``kubernetes``
package, and only when an audit of a cluster is asked for.
"""
