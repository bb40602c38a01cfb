// Package ironicsim is a simulated OpenStack Ironic 21.4 (2023.1) for
// ingot's tests and for `ingot sim`: the node, port, VIF and volume API a
// compute service uses, with the real shapes, status codes and error texts
// (measured in docs/ironic.md), fault injection, a controllable clock
// and request accounting. It holds 10,000 nodes in memory.
//
// # Use
//
//	sim := ironicsim.New(ironicsim.Options{Clock: clk, DeployTime: 10 * time.Minute})
//	sim.AddNodes(100, ironicsim.NodeSpec{ResourceClass: "baremetal"})
//	srv := httptest.NewServer(sim.Handler()) // Ironic at srv.URL+"/v1"
//
// Handler serves both the Ironic API and the admin API (/_sim/). gophercloud's
// noauth client works against it unchanged.
//
// # Fidelity
//
// Microversions 1.1–1.82, chosen by X-OpenStack-Ironic-API-Version (or
// "latest"); no header means 1.1. Like Ironic 21.4, OpenStack-API-Version is
// not read. Responses carry X-OpenStack-Ironic-API-{Minimum-,Maximum-,}Version.
// Errors are double-encoded: {"error_message": "{\"faultcode\": ...,
// \"faultstring\": ..., \"debuginfo\": null}"}; routing errors (unknown path,
// feature below the microversion, unsupported version) carry
// {"code", "title", "description"} inside instead.
//
// Nodes are fake-hardware. Their state moves lazily: an action records a
// pending transition with a deadline taken from the clock, and the first read
// at or after the deadline completes it, stamped with the deadline's instant.
// There is no goroutine and no sleep, so with a *clock.Manual a 10-minute
// deploy costs nothing and every run is deterministic.
//
//   - manage: enroll → verifying (Options.VerifyTime) → manageable.
//   - provide: manageable → cleaning (Options.CleanTime) → available.
//   - active: available or deploy failed → deploying, locked (reservation
//     "localhost"), for the deploy time → active. With deploy_interface
//     custom-agent, or after HoldDeploy: deploying for at most 200 ms, then
//     wait call-back, unlocked; custom-agent nodes then fail after
//     Options.CallbackTimeout ("Timeout reached while waiting for callback for
//     node <uuid>", power on, target stays active), except while in
//     maintenance; held nodes wait for ReleaseDeploy. With an image_source,
//     the deploy records instance_info.image_type ("whole-disk") and
//     driver_internal_info.is_whole_disk_image; without one, nothing.
//     instance_info.traits must all be node traits.
//   - Options.LockLinger keeps the reservation that long after a deploy
//     step ends in active, wait call-back or deploy failed (the real
//     conductor shows the state tens of milliseconds before it unlocks);
//     0, the default, unlocks with the transition.
//   - deleted: active, wait call-back, deploy failed or error → deleting,
//     locked, for the undeploy time → (cleaning →) available. instance_uuid,
//     instance_info and the VIFs are cleared at the end of deleting.
//
// Lists (GET /v1/nodes, /v1/nodes/detail) take fields, limit (default and
// maximum 1000), marker, sort_dir and the filters instance_uuid, associated,
// maintenance, retired, provision_state, resource_class, driver, owner,
// lessee, conductor_group and description_contains. The next link reproduces
// Ironic's quirk: it keeps only the sort keys, truthy
// associated/maintenance/retired, detail and fields, so other filters are lost
// from page 2 on. Only the creation order is kept (sort_key id or created_at).
//
// VIFs follow the node's network_interface: noop (the default; Options.VIFMode
// "store" makes new nodes flat) accepts everything and stores nothing; flat
// needs a free port per VIF and refuses duplicates and unknown detaches.
//
// Traits (≥ 1.37): GET, PUT (replace) and DELETE (all) /v1/nodes/{node}/traits,
// PUT and DELETE /v1/nodes/{node}/traits/{trait}, with Ironic's schema
// (CUSTOM_* or an os-traits name), its 50-trait limit and its texts.
//
// Not simulated: allocations, portgroups, chassis, drivers, conductors,
// inspection, rescue, manual cleaning, and the ~2 s lock retry of
// conductor-side calls (NodeLocked is answered at once).
//
// # Go fault API
//
// FailNextDeploy, HoldDeploy, ReleaseDeploy, DeleteOutOfBand,
// TeardownOutOfBand, SetMaintenance, RemoveInstanceUUID, SetNodeTimes,
// InjectFault, ClearFaults, Restart, AddNodes; read back with Node, Nodes,
// VIFs, Counts and ResetCounts.
//
// # Persistence
//
// A simulator lives in memory unless told otherwise. Snapshot returns its
// state as JSON (nodes with every API field, their provision and power
// states, pending transitions and deadlines, instance_uuid, instance_info,
// reservations, traits, HoldDeploy and FailNextDeploy marks; ports and VIFs;
// volume connectors and targets) and Restore puts it back; fault rules and
// counters are not part of it. Persist(path, onErr) restores from a file when
// it exists and from then on saves every change before answering it (atomic
// write and rename), so `ingot serve --dev` finds its nodes after a restart,
// kill -9 included.
//
// A restored transition keeps its deadline: a deploy (or undeploy, or
// lingering lock) that was due while the process was down is complete when
// the node is next read, and one still due completes on time. That is
// deliberate: the simulator stands for an Ironic that keeps running while
// ingot restarts, so a restarted ingot finds what a real Ironic would show
// it. Restart, not Restore, models a restarted conductor (deploying → deploy
// failed, "can't be resumed").
//
// # Admin HTTP API
//
// Plain JSON, not counted in Counts. Durations are strings such as "5s" or
// numbers of seconds. Success is 204 unless noted; errors are
// {"error": "..."} with 400 (bad body), 404 (unknown node or route) or 409
// (action not possible in the node's state).
//
//	GET    /_sim/counts                      200 {"GET /v1/nodes": 12, "PATCH /v1/nodes/{node}": 3, ...}
//	DELETE /_sim/counts                      reset the counters
//	POST   /_sim/faults                      {"method": "PUT", "path": "/v1/nodes/{node}/states/provision",
//	                                          "kind": "500"|"503"|"locked"|"drop"|"latency",
//	                                          "count": 2, "fraction": 0.5, "latency": "300ms"}
//	DELETE /_sim/faults                      remove every fault
//	POST   /_sim/restart                     Restart(): deploying → deploy failed, reservations cleared
//	POST   /_sim/clock/advance               {"by": "10m"} (only with a *clock.Manual; else 409)
//	GET    /_sim/nodes                       200 {"nodes": [snapshot, ...]}
//	POST   /_sim/nodes                       201 {"uuids": [...]} from {"count": 10, "name_prefix": "n",
//	                                          "resource_class": "baremetal", "properties": {...}, "traits": [...],
//	                                          "deploy_interface": "custom-agent", "network_interface": "flat",
//	                                          "ports": 1, "deploy_time": "5s", "undeploy_time": "2s"}
//	GET    /_sim/nodes/{node}                200 snapshot: {"uuid", "name", "resource_class", "provision_state",
//	                                          "target_provision_state", "power_state", "maintenance",
//	                                          "maintenance_reason", "last_error", "reservation", "instance_uuid",
//	                                          "instance_info", "deploy_interface", "network_interface",
//	                                          "storage_interface", "vifs", "held"}
//	POST   /_sim/nodes/{node}/fail-next-deploy      {"last_error": "..."}
//	POST   /_sim/nodes/{node}/hold-deploy
//	POST   /_sim/nodes/{node}/release-deploy
//	POST   /_sim/nodes/{node}/delete                out-of-band delete (maintenance + DELETE)
//	POST   /_sim/nodes/{node}/teardown              out-of-band undeploy (409 unless deploying, wait call-back,
//	                                                 active, deploy failed or error)
//	POST   /_sim/nodes/{node}/maintenance           {"on": true, "reason": "..."}
//	POST   /_sim/nodes/{node}/remove-instance-uuid
//	POST   /_sim/nodes/{node}/times                 {"deploy_time": "10m", "undeploy_time": "1m"}
//
// {node} is a UUID or a name.
package ironicsim
