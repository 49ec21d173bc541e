//! The YAML configuration of one Patroni node.
//!
//! Everything a node reaches goes through addresses the harness controls:
//! etcd through the node's own proxy (`use_proxies`, so Patroni does not
//! discover etcd's real address and bypass it), and the addresses it
//! advertises to the other members and to clients (`connect_address` of
//! PostgreSQL and of the REST API) are the node's proxies too. Black-holing
//! a node's proxies is then a network partition of that node.

use std::path::Path;

use crate::roles::SUPERUSER;

/// Patroni's cluster name (its `scope`).
pub(super) const SCOPE: &str = "pgpipe";
/// The superuser's password (Patroni insists on one; pg_hba trusts loopback).
pub(super) const SUPERUSER_PASSWORD: &str = "pgpipe-patroni";
/// The replication role Patroni creates at bootstrap.
const REPLICATION_USER: &str = "pgpipe_replicator";
const REPLICATION_PASSWORD: &str = "pgpipe-replicator";

/// The timing of leader election. `ttl` is how long the leader key lives
/// without a refresh (the lower bound of a partition's failover); Patroni
/// wants `loop_wait + 2 * retry_timeout <= ttl`. Short, so that failovers
/// take seconds, but with room for a loaded 2-core machine where a slow
/// loop must not cost the leader its key.
pub(super) const TTL_SECS: u32 = 15;
const LOOP_WAIT_SECS: u32 = 1;
const RETRY_TIMEOUT_SECS: u32 = 5;

/// Ports and paths of one node.
#[derive(Debug, Clone)]
pub(super) struct NodeConfig<'a> {
    pub name: &'a str,
    /// The node's own directory (data/, sock/, patroni.yml).
    pub dir: &'a Path,
    pub bindir: &'a Path,
    /// Where PostgreSQL listens, and the proxy in front of it.
    pub pg_port: u16,
    pub pg_proxy_port: u16,
    /// Where the REST API listens, and the proxy in front of it.
    pub rest_port: u16,
    pub rest_proxy_port: u16,
    /// This node's proxy to etcd's client port.
    pub etcd_proxy_port: u16,
}

impl NodeConfig<'_> {
    /// The YAML text of `patroni.yml`.
    pub(super) fn yaml(&self) -> String {
        let dir = self.dir.display();
        format!(
            r#"scope: {SCOPE}
namespace: /pgpipe-testkit/
name: {name}
log:
  level: INFO
restapi:
  listen: 127.0.0.1:{rest_port}
  connect_address: 127.0.0.1:{rest_proxy_port}
etcd3:
  hosts: 127.0.0.1:{etcd_proxy_port}
  protocol: http
  use_proxies: true
bootstrap:
  dcs:
    ttl: {TTL_SECS}
    loop_wait: {LOOP_WAIT_SECS}
    retry_timeout: {RETRY_TIMEOUT_SECS}
    maximum_lag_on_failover: 1048576
    # A crashed primary is failed over, not restarted in place (when a
    # synchronous standby can take over).
    primary_start_timeout: 0
    # Commits wait for a synchronous standby, and only that standby may be
    # promoted: an acknowledged commit survives any single failure.
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_log_hints: 'on'
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
  initdb:
  - encoding: UTF8
  - locale: C
  pg_hba:
  - local all all trust
  - local replication all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:{pg_port}
  connect_address: 127.0.0.1:{pg_proxy_port}
  data_dir: {dir}/data
  bin_dir: {bindir}
  pgpass: {dir}/pgpass
  authentication:
    superuser:
      username: {SUPERUSER}
      password: {SUPERUSER_PASSWORD}
    replication:
      username: {REPLICATION_USER}
      password: {REPLICATION_PASSWORD}
  parameters:
    unix_socket_directories: {dir}/sock
    # Nothing survives the run: no fsync, but commits still wait for the
    # synchronous standby (synchronous_commit on).
    fsync: 'off'
    full_page_writes: 'off'
    synchronous_commit: 'on'
    shared_buffers: 32MB
    timezone: UTC
    log_timezone: UTC
    log_min_messages: warning
    wal_receiver_timeout: 10s
    wal_sender_timeout: 10s
"#,
            name = self.name,
            rest_port = self.rest_port,
            rest_proxy_port = self.rest_proxy_port,
            etcd_proxy_port = self.etcd_proxy_port,
            pg_port = self.pg_port,
            pg_proxy_port = self.pg_proxy_port,
            bindir = self.bindir.display(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_advertised_address_is_a_proxy() {
        let dir = Path::new("/tmp/x");
        let yaml = NodeConfig {
            name: "node1",
            dir,
            bindir: Path::new("/usr/lib/postgresql/15/bin"),
            pg_port: 1001,
            pg_proxy_port: 2001,
            rest_port: 1002,
            rest_proxy_port: 2002,
            etcd_proxy_port: 2003,
        }
        .yaml();
        assert!(yaml.contains("listen: 127.0.0.1:1001\n  connect_address: 127.0.0.1:2001"));
        assert!(yaml.contains("listen: 127.0.0.1:1002\n  connect_address: 127.0.0.1:2002"));
        assert!(yaml.contains("hosts: 127.0.0.1:2003\n  protocol: http\n  use_proxies: true"));
        assert!(yaml.contains("data_dir: /tmp/x/data"));
        assert!(yaml.contains("synchronous_mode: true"));
    }
}
