from tests.k8s.cases_k8s import CASES  # noqa: F401
