//! The stack comes up as promised and leaves nothing behind.

use std::time::Duration;

use super::PatroniCluster;

#[test]
fn three_nodes_come_up_with_one_leader_and_leave_nothing_behind() {
    let ha = PatroniCluster::start().unwrap_or_else(|e| panic!("{e}"));
    let leader = ha.leader().unwrap().expect("a leader");
    let members = ha.members().unwrap();
    assert_eq!(members.len(), 3, "{members:?}");
    assert_eq!(members.iter().filter(|m| m.is_leader()).count(), 1);
    // Roles as the servers see them, on their own ports and through the
    // proxies' addresses in the URL.
    for node in ha.nodes() {
        assert_eq!(
            node.in_recovery().unwrap(),
            node.name() != leader,
            "{}",
            node.name()
        );
        assert!(ha.url("").contains(&format!("127.0.0.1:{}", node.port())));
        assert!(node.rest_url().starts_with("http://127.0.0.1:"));
    }
    // Writes on the leader reach both replicas (synchronous mode: the
    // commit waited for one of them).
    let leader_node = ha.node(&leader).unwrap();
    leader_node
        .query("CREATE TABLE t (id int); INSERT INTO t VALUES (1)")
        .unwrap();
    for node in ha.nodes() {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while node
            .query("SELECT count(*) FROM t")
            .map(|r| r[0][0].clone())
            != Ok(Some("1".into()))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "{} never saw the row",
                node.name()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    let pids: Vec<u32> = ha
        .nodes()
        .iter()
        .filter_map(|n| n.postmaster_pid())
        .collect();
    assert_eq!(pids.len(), 3);
    let dir = ha.dir().to_path_buf();
    drop(ha);
    for pid in pids {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "postmaster {pid} left running"
        );
    }
    assert!(!dir.exists(), "{} left behind", dir.display());
}

/// What made the kill -9 step of the failover run fail on a loaded
/// machine: Patroni asks the synchronous standby's REST API (2 s timeout,
/// no retry) whether it can fail over; with no answer it keeps the leader
/// key, runs crash recovery and promotes the same node on a new timeline.
/// `wait_for_recovery` accepts that (`wait_for_new_leader` waited for a
/// different leader that never came).
#[test]
fn a_killed_primary_whose_standby_answers_late_recovers_in_place() {
    let ha = PatroniCluster::start().unwrap_or_else(|e| panic!("{e}"));
    ha.freeze_replicas_patroni().unwrap();
    let crashed = ha.kill_primary().unwrap_or_else(|e| panic!("{e}"));
    let recovered = ha.wait_for_recovery(&crashed);
    let leader = ha.leader();
    ha.thaw_patroni();
    let recovered = recovered.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(recovered, crashed.leader, "{leader:?}");
    let timeline = ha.node(&recovered).unwrap().write_timeline().unwrap();
    assert!(timeline > crashed.timeline, "{timeline} after {crashed:?}");
    // The cluster heals around it: both replicas follow the new timeline.
    ha.wait_healthy(Duration::from_secs(240))
        .unwrap_or_else(|e| panic!("{e}"));
}
