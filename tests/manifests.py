"""Reading the Kubernetes manifests (deploy/kubernetes/) as ``kubectl apply -f FOLDER`` does, and the
checks every profile's folder passes: each document against the API's schemas (kubernetes-validate,
which bundles them: no cluster), the variables its containers get, its probes and its security.

Each profile's test (tests/unit/test_kubernetes_demo.py, and the redis slice's
test_kubernetes_distributed.py) runs them on its folder and adds what is particular to it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from packaging.version import Version

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.settings import Settings, declared

ROOT = Path(__file__).resolve().parents[1]
KUBERNETES = ROOT / "deploy" / "kubernetes"
#: The placeholder Secret both profiles read: not a .yaml file, so `kubectl apply -f FOLDER` never
#: applies it (over the user's real one).
SECRET_EXAMPLE = KUBERNETES / "secret.yaml.example"
#: What `kubectl apply -f FOLDER` reads there (not recursively): these endings only.
APPLIED = (".yaml", ".yml", ".json")
#: The oldest Kubernetes the manifests are for (docs/deployment.md): the preStop `sleep` action is
#: on by default from 1.30. Every bundled schema from it to the newest is checked.
OLDEST = Version("1.30")
#: The variables read besides the declared settings: the OpenTelemetry SDK's own.
OTHER_PREFIXES = ("OTEL_",)

_yaml: Any = importlib.import_module("yaml")
# No type hints in the package (no py.typed): what is used of it, typed here.
_validator: Any = importlib.import_module("kubernetes_validate")
_validator_utils: Any = importlib.import_module("kubernetes_validate.utils")


def applied_files(folder: Path) -> list[Path]:
    """The files ``kubectl apply -f folder`` applies, in its order (by name)."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in APPLIED)


def documents_of(path: Path) -> list[dict[str, Any]]:
    """Every non-empty YAML document of ``path``."""
    return [doc for doc in _yaml.safe_load_all(path.read_text()) if doc is not None]


def documents(folder: Path) -> list[dict[str, Any]]:
    return [doc for path in applied_files(folder) for doc in documents_of(path)]


def schema_versions() -> list[str]:
    """Each Kubernetes minor whose schemas kubernetes-validate bundles, from ``OLDEST`` to the newest."""
    bundled = {Version(v) for v in _validator_utils.all_versions()}
    return [str(v) for v in sorted(bundled) if v >= OLDEST]


def schema_errors(document: Mapping[str, Any], version: str) -> str | None:
    """Why ``document`` is not a valid object of Kubernetes ``version`` (strict: an unknown field
    too, such as a misspelt one, which the API server would drop with a warning), or None."""
    try:
        _validator.validate(dict(document), version, strict=True)
    except (_validator.ValidationError, _validator.SchemaNotFoundError) as error:
        return str(error)
    return None


def one(docs: list[dict[str, Any]], kind: str, **labels: str) -> dict[str, Any]:
    """The one document of ``kind`` (with these ``app.kubernetes.io/<label>`` values, if given)."""
    found = [
        doc
        for doc in docs
        if doc["kind"] == kind
        and all(
            doc["metadata"].get("labels", {}).get(f"app.kubernetes.io/{k}") == v for k, v in labels.items()
        )
    ]
    assert len(found) == 1, f"{len(found)} {kind} with {labels}"
    return found[0]


def by_name(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [doc for doc in docs if doc["kind"] == kind and doc["metadata"]["name"] == name]
    return found


def pod_templates(docs: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(workload, its pod template) of every Deployment and StatefulSet."""
    for doc in docs:
        if doc["kind"] in ("Deployment", "StatefulSet"):
            yield doc, doc["spec"]["template"]


def secret_example() -> dict[str, Any]:
    (secret,) = documents_of(SECRET_EXAMPLE)
    return secret


def known_variables() -> set[str]:
    """Every variable the service reads: its settings' and its slots' (docs/configuration.md)."""
    return {spec.env for spec in declared().values()} | {slot.env for slot in SLOTS.values()}


def is_known(variable: str) -> bool:
    return variable in known_variables() or variable.startswith(OTHER_PREFIXES)


def environment(
    docs: list[dict[str, Any]], container: Mapping[str, Any], secret: Mapping[str, Any] | None
) -> dict[str, str]:
    """The variables ``container`` starts with, as the kubelet makes them: each ConfigMap of
    ``docs`` its ``envFrom`` names, then its ``env``, a key of ``secret`` where one refers to it
    (an optional reference to a key not there, or no ``secret``, sets nothing)."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env |= by_name(docs, "ConfigMap", source["configMapRef"]["name"])["data"]
    for variable in container.get("env", []):
        if "value" in variable:
            env[variable["name"]] = variable["value"]
            continue
        ref = variable["valueFrom"]["secretKeyRef"]
        values = {} if secret is None else {**secret.get("stringData", {})}
        if secret is not None and secret["metadata"]["name"] == ref["name"] and ref["key"] in values:
            env[variable["name"]] = str(values[ref["key"]])
        else:
            assert ref.get("optional") is True, f"{variable['name']}: the pod would not start without it"
    return env


def written_variables(docs: list[dict[str, Any]]) -> set[str]:
    """Every variable the folder's ConfigMaps and containers set."""
    found = {key for doc in docs if doc["kind"] == "ConfigMap" for key in doc.get("data", {})}
    for _, template in pod_templates(docs):
        for container in template["spec"]["containers"]:
            found |= {variable["name"] for variable in container.get("env", [])}
    return found


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def dockerfile_image() -> str:
    """The tag the Dockerfile's header builds (``docker build -t NAME .``)."""
    match = re.search(r"^#\s+docker build -t (\S+) \.$", dockerfile(), re.MULTILINE)
    assert match is not None
    return match.group(1)


def dockerfile_port() -> int:
    match = re.search(r"^EXPOSE (\d+)$", dockerfile(), re.MULTILINE)
    assert match is not None
    return int(match.group(1))


def dockerfile_user() -> tuple[int, int]:
    match = re.search(r"^USER (\d+):(\d+)$", dockerfile(), re.MULTILINE)
    assert match is not None
    return int(match.group(1)), int(match.group(2))


def selects(selector: Mapping[str, str], template: Mapping[str, Any]) -> bool:
    labels = template["metadata"]["labels"]
    return all(labels.get(key) == value for key, value in selector.items())


# ---- what every profile's folder passes ----------------------------------------------------------------


def assert_valid_against_every_schema(folder: Path) -> None:
    docs = [*documents(folder), secret_example()]
    versions = schema_versions()
    assert len(versions) >= 2, versions  # the oldest supported and at least the newest
    errors = [
        f"{doc['kind']}/{doc['metadata']['name']} on {version}: {error}"
        for version in versions
        for doc in docs
        if (error := schema_errors(doc, version)) is not None
    ]
    assert errors == []


def assert_applies_as_it_is(folder: Path) -> None:
    """Every file kubectl reads there is objects (no template left to fill), named once each, in the
    namespace `kubectl -n` gives, labelled as the service's."""
    assert applied_files(folder), f"nothing to apply in {folder}"
    names: list[tuple[str, str]] = []
    for path in applied_files(folder):
        for doc in documents_of(path):
            assert {"apiVersion", "kind", "metadata"} <= set(doc), path
            assert "namespace" not in doc["metadata"], path
            assert doc["metadata"]["labels"]["app.kubernetes.io/name"] == "influencer-stats", path
            names.append((doc["kind"], doc["metadata"]["name"]))
        assert "${" not in path.read_text() and "{{" not in path.read_text(), path
    assert len(names) == len(set(names)), names


def assert_every_variable_is_known(folder: Path) -> None:
    written = written_variables(documents(folder)) | set(secret_example()["stringData"])

    assert written, "no variable set"
    assert {v for v in written if not is_known(v)} == set()


def assert_secret_references_name_the_example(folder: Path) -> None:
    """Each secretKeyRef names the example's Secret and a key it has (or shows, commented out), and
    is optional: the pods start without the Secret, and a setting left out keeps its default."""
    example = secret_example()
    text = SECRET_EXAMPLE.read_text()
    refs = [
        variable["valueFrom"]["secretKeyRef"]
        for _, template in pod_templates(documents(folder))
        for container in template["spec"]["containers"]
        for variable in container.get("env", [])
        if "secretKeyRef" in variable.get("valueFrom", {})
    ]
    assert refs
    for ref in refs:
        assert ref["name"] == example["metadata"]["name"], ref
        assert ref["optional"] is True, ref
        shown = ref["key"] in example["stringData"] or re.search(
            rf"^\s*#\s*{ref['key']}: ", text, re.MULTILINE
        )
        assert shown, f"{ref['key']} is not in {SECRET_EXAMPLE.name}"


def assert_hardened(folder: Path) -> None:
    """Every pod: no service-link variables (a Service named influencer-stats would set
    INFLUENCER_STATS_PORT=tcp://…), no API token, non-root with the default seccomp profile; every
    container: no privilege escalation, no capability, a read-only root, requests and a memory limit."""
    for workload, template in pod_templates(documents(folder)):
        spec, name = template["spec"], workload["metadata"]["name"]
        assert spec["enableServiceLinks"] is False, name
        assert spec["automountServiceAccountToken"] is False, name
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] > 0, name
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), name
            assert "memory" in container["resources"]["limits"], name


def api_containers(folder: Path) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(workload, pod template, container) of each container running the service's image."""
    return [
        (workload, template, container)
        for workload, template in pod_templates(documents(folder))
        for container in template["spec"]["containers"]
        if container["image"].partition(":")[0] == dockerfile_image()
    ]


def assert_the_image_as_the_dockerfile_builds_it(folder: Path) -> None:
    """The Dockerfile's tag (not pulled when the cluster has it: loaded by kind or minikube), its
    user, and the port it exposes, named for the probes and the Service."""
    found = api_containers(folder)
    assert found, f"no container of {dockerfile_image()} in {folder}"
    for _, template, container in found:
        assert container["imagePullPolicy"] == "IfNotPresent"
        context = template["spec"]["securityContext"]
        assert (context["runAsUser"], context["runAsGroup"]) == dockerfile_user()
        assert container["ports"] == [{"name": "http", "containerPort": dockerfile_port(), "protocol": "TCP"}]


def probe_paths(container: Mapping[str, Any]) -> dict[str, str]:
    """Each probe's path, on the container's named port."""
    names = {port["name"] for port in container["ports"]}
    paths: dict[str, str] = {}
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        get = container[probe]["httpGet"]
        assert get["port"] in names, (probe, get)
        paths[probe] = get["path"]
    return paths


def assert_services_reach_their_pods(folder: Path) -> None:
    """Each Service selects one workload's pods, on a port their containers name."""
    docs = documents(folder)
    for service in (doc for doc in docs if doc["kind"] == "Service"):
        selector = service["spec"]["selector"]
        (template,) = [t for _, t in pod_templates(docs) if selects(selector, t)]
        named = {p["name"] for c in template["spec"]["containers"] for p in c["ports"]}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in named, service["metadata"]["name"]
    for workload, template in pod_templates(docs):
        assert selects(workload["spec"]["selector"]["matchLabels"], template)


def assert_graceful_stop_fits(folder: Path, graceful_shutdown_s: float) -> None:
    """The pod gets its preStop pause and the service's drain before the kubelet kills it."""
    for _, template, container in api_containers(folder):
        pause = container["lifecycle"]["preStop"]["sleep"]["seconds"]
        assert template["spec"]["terminationGracePeriodSeconds"] > pause + graceful_shutdown_s


def written_paths(settings: Settings) -> dict[str, str]:
    """Setting → file, of each file the chosen entries declare they write (``Entry.paths``): the
    SQLite file with the ``sqlite`` slice's store, none with a memory one."""
    return {
        name: str(getattr(settings, name))
        for slot in SLOTS.values()
        for choice in settings.choices[slot.name]
        for name in slot.registry[choice].paths
    }


_DOCKER_UNITS = {"Ki": "k", "Mi": "m", "Gi": "g"}


def docker_memory(quantity: str) -> str:
    """A Kubernetes memory quantity in binary units as docker's (``512Mi`` → ``512m``, the same bytes)."""
    match = re.fullmatch(r"(\d+)(Ki|Mi|Gi)", quantity)
    assert match is not None, quantity
    return match.group(1) + _DOCKER_UNITS[match.group(2)]


def docker_options(template: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, Any]:
    """docker run's options (docker-py's names) for what a pod spec says of its container: its user,
    no capability, no privilege escalation, a read-only root, its memory limit, and each volume
    mounted where the spec mounts it, writable by the pod's user and group as the kubelet makes an
    emptyDir (and, with fsGroup, a claim): a tmpfs each, without a cluster."""
    pod, context = template["spec"]["securityContext"], container["securityContext"]
    group = pod.get("fsGroup", pod["runAsGroup"])
    owned = f"uid={pod['runAsUser']},gid={group},mode=0770"
    return {
        "user": f"{pod['runAsUser']}:{pod['runAsGroup']}",
        "read_only": context["readOnlyRootFilesystem"],
        "cap_drop": context["capabilities"]["drop"],
        "security_opt": [] if context["allowPrivilegeEscalation"] else ["no-new-privileges"],
        "mem_limit": docker_memory(container["resources"]["limits"]["memory"]),
        "tmpfs": {mount["mountPath"]: owned for mount in container["volumeMounts"]},
    }
