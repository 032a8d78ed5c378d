"""The Slurm parsers and the login-node collector on real captures from the
local cluster (tests/fixtures/slurm/; captured by tools/slurm-local/capture-fixtures,
Slurm 22.05.8), plus hypothesis: random text never raises."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.slurm.collect import client_tool, node_from_record
from clustergrade.slurm.parse import (
    parse_mpi_list,
    parse_one_line_records,
    parse_show_config,
    split_gres,
    split_states,
)
from tests.slurm.replay import DBD, LOCAL, VARIANT, one_line, replay_slurm, text


def test_show_config_local() -> None:
    parsed = parse_show_config(text(LOCAL, "scontrol_show_config.txt"))
    assert len(parsed.records) == 1
    cfg = parsed.records[0]
    assert cfg["ClusterName"] == "localci"
    assert cfg["SLURM_VERSION"] == "22.05.8"
    assert cfg["PrivateData"] == "none"
    assert cfg["SelectType"] == "select/cons_tres"
    assert cfg["AccountingStorageType"] == "accounting_storage/none"
    assert cfg["HealthCheckInterval"] == "0 sec"
    assert cfg["HealthCheckProgram"] == "(null)"
    assert cfg["ProctrackType"] == "proctrack/linuxproc"
    assert cfg["TaskPlugin"] == "task/none"
    assert cfg["DefMemPerCPU"] == "2711"
    assert cfg["SLURM_CONF"].endswith("/slurm.conf")
    # The header and the trailing "Slurmctld(primary) at vm is UP" are not settings.
    assert "Configuration data as of 2026-12-02T15:00:49" not in cfg
    # An empty value is a setting too, not an unreadable line.
    assert cfg["PowerPlugin"] == ""
    assert parsed.skipped_lines == 0


def test_show_config_variants() -> None:
    hardened = parse_show_config(text(VARIANT, "scontrol_show_config.txt")).records[0]
    assert hardened["PrivateData"] == "accounts,jobs,usage,users"
    assert hardened["HealthCheckProgram"] == "/bin/true"
    assert hardened["HealthCheckInterval"] == "60 sec"
    assert hardened["SlurmdTimeout"] == "5 sec"
    dbd = parse_show_config(text(DBD, "scontrol_show_config.txt")).records[0]
    assert dbd["AccountingStorageType"] == "accounting_storage/slurmdbd"
    assert dbd["AccountingStorageTRES"].endswith(",gres/gpu")


def test_one_line_nodes() -> None:
    parsed = parse_one_line_records(one_line(text(LOCAL, "scontrol_show_node.txt")))
    assert [r["NodeName"] for r in parsed.records] == ["n1", "n2", "n3", "n4"]
    assert parsed.skipped_lines == 0
    n1 = parsed.records[0]
    # Values with spaces run until the next Key=.
    assert n1["OS"] == "Linux 6.18.44-fc-v1098 #1 SMP PREEMPT_DYNAMIC @0"
    assert n1["Gres"] == "gpu:h100:4"
    assert n1["CfgTRES"] == "cpu=2,mem=5423M,billing=2"
    assert n1["AllocTRES"] == ""
    assert n1["State"] == "IDLE"
    assert parsed.records[1]["Port"] == "49324"


def test_one_line_node_down_reason() -> None:
    recs = parse_one_line_records(one_line(text(VARIANT, "scontrol_show_node_n3_down.txt"))).records
    n3 = next(r for r in recs if r["NodeName"] == "n3")
    assert n3["State"] == "DOWN+NOT_RESPONDING"
    assert n3["Reason"] == "Not responding [root@2026-12-02T15:02:01]"
    node = node_from_record(n3)
    assert node.states == ["DOWN", "NOT_RESPONDING"]
    assert node.reason == "Not responding [root@2026-12-02T15:02:01]"


def test_one_line_partition() -> None:
    recs = parse_one_line_records(one_line(text(LOCAL, "scontrol_show_partition.txt"))).records
    assert len(recs) == 1
    p = recs[0]
    assert p["PartitionName"] == "debug"
    assert p["Nodes"] == "n[1-4]"
    assert p["Default"] == "YES"
    assert p["TotalNodes"] == "4"
    assert p["DefMemPerNode"] == "UNLIMITED"
    assert p["TRES"] == "cpu=8,mem=21692M,node=4,billing=8"


def test_multi_line_input_is_not_mistaken_for_records() -> None:
    # Without -o each record spans lines; each line then reads as a record
    # with no NodeName.  The collector always asks for -o.
    recs = parse_one_line_records(text(LOCAL, "scontrol_show_node.txt")).records
    assert sum("NodeName" in r for r in recs) == 4


def test_mpi_list_local() -> None:
    assert parse_mpi_list(text(LOCAL, "srun_mpi_list.txt")) == [
        "pmix",
        "none",
        "cray_shasta",
        "pmi2",
        "pmix_v4",
    ]


def test_split_gres_and_states() -> None:
    sinfo = text(LOCAL, "sinfo_N_h_gres.txt").splitlines()
    assert [split_gres(line.split("|")[3]) for line in sinfo] == [[("gpu", "h100", 4)]] * 4
    assert split_gres("(null)") == []
    assert split_gres("gpu:h100:4(S:0-1),gpu:a100:2") == [("gpu", "h100", 4), ("gpu", "a100", 2)]
    down = text(VARIANT, "sinfo_N_h_state_n3_down.txt").splitlines()
    assert [split_states(line.split("|")[1]) for line in down] == [
        ["IDLE"],
        ["IDLE"],
        ["DOWN", "NOT_RESPONDING"],
        ["IDLE"],
    ]
    assert split_states("IDLE+DRAIN") == ["IDLE", "DRAIN"]


def test_client_version() -> None:
    assert client_tool(text(LOCAL, "sinfo_V.txt")).version == "22.05.8"


def test_collect_slurm_replayed() -> None:
    s = replay_slurm()
    assert s.present and s.controller_reachable
    assert s.client is not None and s.client.version == "22.05.8"
    assert s.setting("privatedata") == "none"
    assert [n.name for n in s.nodes] == ["n1", "n2", "n3", "n4"]
    n1 = s.nodes[0]
    assert (n1.cpus, n1.real_memory_mb, n1.slurmd_version) == (2, 5423, "22.05.8")
    assert [(g.name, g.type, g.count) for g in n1.gres] == [("gpu", "h100", 4)]
    assert n1.partitions == ["debug"]
    assert [(p.name, p.nodes, p.state, p.default) for p in s.partitions] == [
        ("debug", "n[1-4]", "UP", True)
    ]
    assert "pmix" in s.mpi_plugins
    # 22.05's srun --help has --container (OCI) but no Pyxis --container-image.
    assert s.srun_container_options == []
    assert s.cgroup_config == {}
    # Commands the captures do not hold are errors, never "works".
    assert {c.command for c in s.commands if not c.works} == {
        "sinfo",
        "squeue",
        "scontrol",
        "sacct",
        "srun",
        "sbatch",
        "salloc",
    }
    probes = {p.probe: p for p in s.isolation}
    assert probes["squeue-other-users"].exposed is None
    assert probes["squeue-other-users"].error
    assert probes["sacct-other-users"].error


def test_collect_slurm_node_down() -> None:
    s = replay_slurm(config="scontrol_show_config.txt", nodes="scontrol_show_node_n3_down.txt")
    assert s.setting("PrivateData") == "accounts,jobs,usage,users"
    states = {n.name: n.states for n in s.nodes}
    assert states == {
        "n1": ["IDLE"],
        "n2": ["IDLE"],
        "n3": ["DOWN", "NOT_RESPONDING"],
        "n4": ["IDLE"],
    }


_FRAGMENTS = [
    text(LOCAL, "scontrol_show_config.txt"),
    one_line(text(LOCAL, "scontrol_show_node.txt")),
    text(LOCAL, "srun_mpi_list.txt"),
    text(VARIANT, "sinfo_N_h_state_n3_down.txt"),
]


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet="=:,+*()[] \n\tKeyNodeName0123abc|#"),
        st.sampled_from(_FRAGMENTS).flatmap(
            lambda real: st.tuples(
                st.integers(0, len(real)), st.integers(0, len(real)), st.text(max_size=40)
            ).map(lambda t: real[: min(t[0], t[1])] + t[2] + real[max(t[0], t[1]) :])
        ),
    )
)
def test_parsers_never_raise(junk: str) -> None:
    parse_show_config(junk)
    for rec in parse_one_line_records(junk).records:
        node_from_record(rec)
    parse_mpi_list(junk)
    split_gres(junk)
    split_states(junk)
    client_tool(junk)
