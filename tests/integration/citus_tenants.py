"""Tenants for the Citus tier's checks: `on_two_workers(admin, prefix)` returns the first two
tenant ids `<prefix>_<n>` whose shards of todo.todos live on different workers, and the set of
those workers' ports (one port only if 64 names never reached a second worker)."""


def worker_of(admin, tenant):
    """The port of the worker holding the tenant's shard of todo.todos."""
    return admin.execute(
        "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid)"
        " WHERE p.shardid = get_shard_id_for_distribution_column('todo.todos', %s::text)", (tenant,)).fetchone()[0]


def on_two_workers(admin, prefix):
    tenants, ports = [], set()
    for i in range(64):
        t = f"{prefix}_{i}"
        p = worker_of(admin, t)
        if p not in ports:
            tenants.append(t)
            ports.add(p)
        if len(ports) == 2:
            break
    return tenants, ports
