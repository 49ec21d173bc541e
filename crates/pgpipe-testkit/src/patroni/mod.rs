//! A real HA stack on loopback: etcd (v3 API) and three PostgreSQL nodes
//! under Patroni, for failover tests: switchover, `kill -9` of the
//! primary's postmaster, and a network partition of the primary.
//!
//! ```no_run
//! use pgpipe_testkit::PatroniCluster;
//!
//! let ha = PatroniCluster::start()?; // a leader and two streaming replicas
//! // Every node through its proxy, writes to the primary.
//! let url = ha.url("target_session_attrs=read-write");
//! let old = ha.switchover()?;
//! let new = ha.wait_for_new_leader(&old)?;
//! # let _ = (url, new);
//! # Ok::<(), pgpipe_testkit::TestkitError>(())
//! ```
//!
//! Every connection to a node (clients, replicas streaming from it, the
//! other members calling its REST API) goes through a [`FaultProxy`] in
//! front of it, and each node reaches etcd through one of its own:
//! [`PatroniCluster::partition_primary`] black-holes the four links of the
//! leader, which is then alone, as behind a cut cable (its own outgoing
//! connections to the other nodes' proxies stay open: with etcd out of
//! reach, Patroni demotes it and it follows no one). The harness itself
//! reaches every node on its own ports, outside the partition.
//!
//! Needs Patroni 3.0 and etcd 3.4 (`scripts/ensure-patroni.sh` installs
//! Debian's packages) and PostgreSQL 15's binaries (Patroni 3.0 supports
//! up to 15, so the stack runs 15 whatever `PGPIPE_PG_VERSION` says).
//! Patroni runs as the server user when the tests run as root, as the
//! testkit's other servers do. Everything is stopped and deleted on drop;
//! if the test process dies, Patroni and etcd get SIGTERM (Patroni stops
//! its PostgreSQL).

mod config;
mod etcd;
mod node;
mod process;
mod rest;
#[cfg(test)]
mod tests;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub use node::PatroniNode;
pub use rest::Member;

use crate::binaries::{find_bindir, pg_config_bindir, Search};
use crate::error::TestkitError;
use crate::process::{server_user, signal};
use crate::roles::SUPERUSER;
use crate::server::make_root;
use etcd::Etcd;

/// The PostgreSQL major the stack runs (the newest Patroni 3.0 supports).
pub const PATRONI_PG_MAJOR: u32 = 15;
/// How long the stack may take to come up: an initdb and two base backups
/// on a loaded machine.
const READY_TIMEOUT: Duration = Duration::from_secs(240);
/// How long a failover may take before the harness reports it failed: the
/// leader key's time to live plus a promotion, with room for a loaded
/// machine.
pub const FAILOVER_TIMEOUT: Duration = Duration::from_secs(120);
const NODES: usize = 3;
/// How long a member may stay out of streaming during [`PatroniCluster::wait_healthy`]
/// before it is reinitialized.
pub const REJOIN_GRACE: Duration = Duration::from_secs(30);

/// What [`PatroniCluster::kill_primary`] killed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Crashed {
    /// The member whose postmaster was killed.
    pub leader: String,
    /// The timeline it was writing on.
    pub timeline: u32,
}

/// etcd and three Patroni nodes on loopback, each running PostgreSQL with
/// its links to the others going through fault proxies.
pub struct PatroniCluster {
    // Dropped in this order after `Drop::drop` has stopped the processes:
    // the nodes (and their proxies), etcd, then the directory.
    nodes: Vec<PatroniNode>,
    etcd: Etcd,
    /// The index of the node cut off by [`PatroniCluster::partition_primary`].
    partitioned: Mutex<Option<usize>>,
    /// Members [`PatroniCluster::wait_healthy`] had to reinitialize.
    reinitialized: Mutex<Vec<String>>,
    dir: TempDir,
}

impl PatroniCluster {
    /// Starts etcd and three nodes on free loopback ports in a fresh
    /// temporary directory, and waits (at most 240 s) until there is a
    /// leader that takes writes and two replicas streaming from it.
    pub fn start() -> Result<PatroniCluster, TestkitError> {
        let user = server_user()?;
        let bindir = find_bindir(&Search::for_major(PATRONI_PG_MAJOR), pg_config_bindir)
            .map_err(|e| e.context("the Patroni cluster runs PostgreSQL 15"))?;
        let (dir, _socket_dir) = make_root(user.as_ref())?;
        let etcd = Etcd::start(dir.path(), user.as_ref())?;
        // From here on, a failure drops the cluster, which stops what runs.
        let mut cluster = PatroniCluster {
            nodes: Vec::with_capacity(NODES),
            etcd,
            partitioned: Mutex::new(None),
            reinitialized: Mutex::new(Vec::new()),
            dir,
        };
        for i in 1..=NODES {
            let name = format!("node{i}");
            let node_dir = cluster.dir.path().join(&name);
            let node = PatroniNode::start(
                &name,
                node_dir,
                &bindir,
                cluster.etcd.client_addr(),
                user.as_ref(),
            )?;
            cluster.nodes.push(node);
            // The first node bootstraps alone: the others then find a
            // leader to copy instead of racing for the initialize key.
            if i == 1 {
                cluster.wait_until("node1 leads", READY_TIMEOUT, |c| {
                    c.writable_leader().map(|l| l.is_some_and(|l| l == "node1"))
                })?;
            }
        }
        cluster.wait_healthy(READY_TIMEOUT)?;
        Ok(cluster)
    }

    /// The three nodes.
    pub fn nodes(&self) -> &[PatroniNode] {
        &self.nodes
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&PatroniNode> {
        self.nodes.iter().find(|n| n.name() == name)
    }

    /// The superuser clients log in as (trusted on loopback).
    pub fn superuser(&self) -> &str {
        SUPERUSER
    }

    /// A multi-host URL over every node's proxy, to the `postgres`
    /// database as the superuser, with `params` as its query string
    /// (e.g. `target_session_attrs=read-write`).
    pub fn url(&self, params: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("{}:{}", n.host(), n.port()))
            .collect();
        let mut url = format!("postgres://{SUPERUSER}@{}/postgres", hosts.join(","));
        if !params.is_empty() {
            url.push('?');
            url.push_str(params);
        }
        url
    }

    /// The members as Patroni reports them (`GET /cluster`), asked of the
    /// first node outside the partition that answers.
    pub fn members(&self) -> Result<Vec<Member>, TestkitError> {
        let cut = self.partitioned_index();
        let mut last = None;
        for (i, node) in self.nodes.iter().enumerate() {
            if Some(i) == cut {
                continue;
            }
            match rest::cluster(node.rest_addr()) {
                Ok(members) => return Ok(members),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| TestkitError::new("no node to ask")))
    }

    /// The name of the member holding the leader key, if any.
    pub fn leader(&self) -> Result<Option<String>, TestkitError> {
        Ok(self
            .members()?
            .into_iter()
            .find(Member::is_leader)
            .map(|m| m.name))
    }

    /// The leader, if it also takes writes (not in recovery on its own port).
    fn writable_leader(&self) -> Result<Option<String>, TestkitError> {
        let Some(name) = self.leader()? else {
            return Ok(None);
        };
        let node = self.node_named(&name)?;
        Ok((!node.in_recovery()?).then_some(name))
    }

    /// Waits (bounded by `timeout`) until there is a leader that takes
    /// writes and the two other members are running replicas streaming
    /// from it (`pg_stat_replication` on the leader, by the members' names),
    /// one of them its synchronous standby; returns the leader.
    ///
    /// A member that does not stream from the leader for [`REJOIN_GRACE`]
    /// is reinitialized through Patroni's `POST /reinitialize`, as an
    /// operator would: Patroni 3.0.2 does not always rewind an old primary
    /// (seen after `kill -9`: "requested timeline does not contain minimum
    /// recovery point", and after a partition: a demoted primary left
    /// running on its old timeline, which Patroni reports as a running
    /// replica). At most once per member and call;
    /// [`reinitialized`](PatroniCluster::reinitialized) lists them.
    pub fn wait_healthy(&self, timeout: Duration) -> Result<String, TestkitError> {
        let mut leader = String::new();
        let mut behind_since: Vec<(String, Instant)> = Vec::new();
        let mut reinitialized_here: Vec<String> = Vec::new();
        self.wait_until("a leader and two streaming replicas", timeout, |c| {
            let members = c.members()?;
            let writable = match members.iter().find(|m| m.is_leader()) {
                Some(l) => {
                    let node = c.node_named(&l.name)?;
                    (!node.in_recovery()?).then(|| (l.name.clone(), node))
                }
                None => None,
            };
            // Who streams from the leader (Patroni's application_name is
            // the member's name).
            let streaming: Vec<String> = match &writable {
                Some((_, node)) => node
                    .query(
                        "SELECT application_name FROM pg_stat_replication \
                         WHERE state = 'streaming'",
                    )?
                    .into_iter()
                    .filter_map(|row| row.into_iter().next().flatten())
                    .collect(),
                None => Vec::new(),
            };
            for m in &members {
                let fine = m.is_leader()
                    || writable.is_none()
                    || (m.is_running_replica() && streaming.contains(&m.name));
                if fine {
                    behind_since.retain(|(n, _)| n != &m.name);
                } else if !behind_since.iter().any(|(n, _)| n == &m.name) {
                    behind_since.push((m.name.clone(), Instant::now()));
                }
            }
            for (name, since) in &behind_since {
                if since.elapsed() >= REJOIN_GRACE && !reinitialized_here.contains(name) {
                    rest::reinitialize(c.node_named(name)?.rest_addr())?;
                    reinitialized_here.push(name.clone());
                    c.reinitialized
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(name.clone());
                }
            }
            let Some((name, _)) = writable else {
                return Ok(false);
            };
            // In synchronous mode only the synchronous standby may be
            // promoted: until there is one, no failover is safe.
            let synchronous = members
                .iter()
                .any(|m| m.role == "sync_standby" && streaming.contains(&m.name));
            let replicas = members
                .iter()
                .filter(|m| m.is_running_replica() && streaming.contains(&m.name))
                .count();
            let ok = replicas == NODES - 1 && synchronous;
            if ok {
                leader = name;
            }
            Ok(ok)
        })?;
        Ok(leader)
    }

    /// A planned switchover (`POST /switchover` to the leader's REST API:
    /// what `patronictl switchover` does): the leader hands over to the
    /// synchronous standby. Returns the old leader's name once Patroni
    /// reports the switchover done; [`wait_for_new_leader`] then waits for
    /// the new one to take writes.
    ///
    /// [`wait_for_new_leader`]: PatroniCluster::wait_for_new_leader
    pub fn switchover(&self) -> Result<String, TestkitError> {
        let leader = self.current_leader()?;
        let node = self.node_named(&leader)?;
        rest::switchover(node.rest_addr(), &leader).map_err(|e| self.explain(e))?;
        Ok(leader)
    }

    /// `kill -9` of the leader's postmaster (its backends die with it), as
    /// when a primary's server dies under it. Returns the old leader and
    /// the timeline it wrote on; [`wait_for_recovery`] then waits for
    /// writes to be taken again.
    ///
    /// Patroni is set to fail a crashed primary over rather than restart it
    /// in place (`primary_start_timeout: 0`), but only "if possible": it
    /// first asks the synchronous standby's REST API for its state, with a
    /// 2 s timeout and no retry. On a loaded machine that answer can come
    /// late, and Patroni, still holding the leader key, then runs crash
    /// recovery and promotes the same node again (on a new timeline). Both
    /// are what a Patroni cluster does when its primary dies.
    ///
    /// [`wait_for_recovery`]: PatroniCluster::wait_for_recovery
    pub fn kill_primary(&self) -> Result<Crashed, TestkitError> {
        let leader = self.current_leader()?;
        let node = self.node_named(&leader)?;
        let timeline = node.write_timeline()?;
        let pid = node.postmaster_pid().ok_or_else(|| {
            TestkitError::new(format!("{leader} leads, but its postmaster.pid is gone"))
        })?;
        signal(pid, libc::SIGKILL);
        Ok(Crashed { leader, timeline })
    }

    /// Waits (at most [`FAILOVER_TIMEOUT`]) until, after
    /// [`kill_primary`](PatroniCluster::kill_primary), a leader takes
    /// writes on a later timeline than the crashed one: another member
    /// (a failover) or the crashed one itself after crash recovery (see
    /// [`kill_primary`](PatroniCluster::kill_primary)). Returns its name.
    pub fn wait_for_recovery(&self, crashed: &Crashed) -> Result<String, TestkitError> {
        let mut new = String::new();
        self.wait_until(
            &format!(
                "a leader writing on a timeline after {} (crashed {})",
                crashed.timeline, crashed.leader
            ),
            FAILOVER_TIMEOUT,
            |c| {
                let Some(l) = c.writable_leader()? else {
                    return Ok(false);
                };
                if c.node_named(&l)?.write_timeline()? <= crashed.timeline {
                    return Ok(false);
                }
                new = l;
                Ok(true)
            },
        )?;
        Ok(new)
    }

    /// Freezes (SIGSTOP) the Patroni of every member but the leader: their
    /// REST APIs stop answering, as a loaded machine's can for seconds,
    /// while their PostgreSQL goes on.
    /// [`thaw_patroni`](PatroniCluster::thaw_patroni) (or dropping the
    /// cluster) undoes it.
    pub fn freeze_replicas_patroni(&self) -> Result<(), TestkitError> {
        let leader = self.current_leader()?;
        for node in self.nodes.iter().filter(|n| n.name() != leader) {
            node.freeze_patroni(true);
        }
        Ok(())
    }

    /// Thaws (SIGCONT) every member's Patroni.
    pub fn thaw_patroni(&self) {
        for node in &self.nodes {
            node.freeze_patroni(false);
        }
    }

    /// Cuts the leader off: every link to and from it (its
    /// clients, replicas streaming from it, the REST API, its own link to
    /// etcd) is black-holed. Returns its name;
    /// [`heal`](PatroniCluster::heal) ends the partition.
    pub fn partition_primary(&self) -> Result<String, TestkitError> {
        let leader = self.current_leader()?;
        let index = self
            .nodes
            .iter()
            .position(|n| n.name() == leader)
            .ok_or_else(|| TestkitError::new(format!("no node named {leader}")))?;
        self.heal();
        self.nodes[index].isolate(true);
        *self.partitioned.lock().unwrap_or_else(|p| p.into_inner()) = Some(index);
        Ok(leader)
    }

    /// Aborts (TCP reset) the connections clients hold to the partitioned
    /// node, as their kernels would on a real cut once `tcp_user_timeout`
    /// or keepalives give up: the proxy acknowledges what it holds, so
    /// without this a client cannot tell the link is dead. New connections
    /// stay black-holed. Returns how many were aborted.
    pub fn abort_partitioned_connections(&self) -> usize {
        match self.partitioned_index() {
            Some(i) => self.nodes[i].reset_client_connections(),
            None => 0,
        }
    }

    /// Ends a partition: every proxy forwards again.
    pub fn heal(&self) {
        let cut = self
            .partitioned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(i) = cut {
            self.nodes[i].isolate(false);
        }
    }

    /// Waits (at most [`FAILOVER_TIMEOUT`]) until a member other than
    /// `old` holds the leader key and takes writes; returns its name.
    pub fn wait_for_new_leader(&self, old: &str) -> Result<String, TestkitError> {
        let mut new = String::new();
        self.wait_until(
            &format!("a leader other than {old}"),
            FAILOVER_TIMEOUT,
            |c| {
                Ok(match c.writable_leader()? {
                    Some(l) if l != old => {
                        new = l;
                        true
                    }
                    _ => false,
                })
            },
        )?;
        Ok(new)
    }

    /// The members [`wait_healthy`](PatroniCluster::wait_healthy) had to
    /// reinitialize because they did not rejoin on their own.
    pub fn reinitialized(&self) -> Vec<String> {
        self.reinitialized
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The directory holding etcd's and every node's data and logs.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// The last `n` lines of etcd's log and of every node's, for failure
    /// messages.
    pub fn logs(&self, n: usize) -> String {
        let mut out = format!("--- etcd\n{}\n", self.etcd.log_tail(n));
        for node in &self.nodes {
            out.push_str(&format!("--- {}\n{}\n", node.name(), node.log_tail(n)));
        }
        out
    }

    fn current_leader(&self) -> Result<String, TestkitError> {
        self.writable_leader()?
            .ok_or_else(|| self.explain(TestkitError::new("no leader that takes writes")))
    }

    fn node_named(&self, name: &str) -> Result<&PatroniNode, TestkitError> {
        self.node(name)
            .ok_or_else(|| TestkitError::new(format!("Patroni reports an unknown member {name}")))
    }

    fn partitioned_index(&self) -> Option<usize> {
        *self.partitioned.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Polls `check` every 100 ms until it returns true; errors count as
    /// "not yet". On timeout, or when a Patroni exits, the error carries
    /// the last answer and every log's last lines.
    fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut(&Self) -> Result<bool, TestkitError>,
    ) -> Result<(), TestkitError> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match check(self) {
                Ok(true) => return Ok(()),
                Ok(false) => "not yet".to_string(),
                Err(e) => e.to_string(),
            };
            if let Some(exited) = self.nodes.iter().find_map(|n| n.exited()) {
                return Err(
                    self.explain(TestkitError::new(format!("waiting until {what}: {exited}")))
                );
            }
            if Instant::now() >= deadline {
                let members = self
                    .members()
                    .map(|m| format!("{m:?}"))
                    .unwrap_or_else(|e| e.to_string());
                return Err(self.explain(TestkitError::new(format!(
                    "not {what} within {} s (last: {last}; members: {members})",
                    timeout.as_secs()
                ))));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn explain(&self, e: TestkitError) -> TestkitError {
        TestkitError::new(format!("{e}\n{}", self.logs(25)))
    }
}

impl Drop for PatroniCluster {
    fn drop(&mut self) {
        self.heal();
        // All at once: a replica left running while the leader stops
        // would try to take over.
        std::thread::scope(|s| {
            for node in &self.nodes {
                s.spawn(|| node.stop());
            }
        });
    }
}

impl std::fmt::Debug for PatroniCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatroniCluster")
            .field("nodes", &self.nodes)
            .field("dir", &self.dir.path())
            .finish()
    }
}
