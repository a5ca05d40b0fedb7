#!/usr/bin/env node
// Per-call cost of the Node host (Extism JS SDK) on the Go benchmark's snapshots: a settled
// RollingUpdate StatefulSet with N Running, Ready pods whose template has just changed, so one
// reconcile creates a ControllerRevision, deletes the highest pod and updates the status
// (host/wasm/snapshot_gen_test.go, reproduced byte for byte below).
//
//   node bench.mjs [--sizes 10,100,1000] [--min-time-ms 2000] [--module m.wasm]
//
// Modes: "worker" is the host's default (the plugin in a worker thread, which the SDK needs to
// enforce timeoutMs); "main-thread" is timeoutMs 0 (no timeout, the plugin on the calling thread);
// "new-host" is loadOrdinal + reconcile + close per call (read and compile the module, start the
// worker, describe handshake), what a one-shot `node reconcile.mjs` pays besides Node's startup.
// The sha256 column matches the Go benchmark's snapshot bytes. Compare with `go test -bench Reconcile ./host/wasm`
// (pods=N/extism/reuse is the same export through the Extism Go SDK).
import { parseArgs } from 'node:util';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadOrdinal } from './ordinal.mjs';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10,100,1000' },
    'min-time-ms': { type: 'string', default: '2000' },
    module: { type: 'string' }, // another .wasm than host/embedded/ordinal.wasm
  },
});
const sizes = values.sizes.split(',').map(Number);
const minTime = Number(values['min-time-ms']);

const pad = (n, w) => String(n).padStart(w, '0');
const q = JSON.stringify;

export function rollingUpdateSnapshot(n) {
  const uid = '6f1c2f0e-8a55-4d5e-9b3c-0d1e2a3b4c5d';
  const oldRev = 'web-7b9c6d5f4';
  const container = (image) =>
    `{"name":"nginx","image":"registry.k8s.io/nginx-slim:${image}","ports":[{"name":"web","containerPort":80,"protocol":"TCP"}],` +
    `"resources":{},"volumeMounts":[{"name":"data","mountPath":"/usr/share/nginx/html"}],` +
    `"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}`;
  const podSpecTail =
    `"volumes":[{"name":"data","emptyDir":{}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",` +
    `"securityContext":{},"schedulerName":"default-scheduler"`;
  const template = (image) => `{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[${container(image)}],${podSpecTail}}}`;
  const parts = [];
  parts.push(
    `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":{"kind":"StatefulSet","apiVersion":"apps/v1",` +
      `"metadata":{"name":"web","namespace":"default","uid":${q(uid)},"resourceVersion":"90210","generation":2,"creationTimestamp":"2026-04-01T00:00:00Z","labels":{"app":"web"}},` +
      `"spec":{"replicas":${n},"selector":{"matchLabels":{"app":"web"}},"template":${template('0.28')},"serviceName":"web","podManagementPolicy":"OrderedReady",` +
      `"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0,"maxUnavailable":1}},"revisionHistoryLimit":10,` +
      `"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"}},` +
      `"status":{"observedGeneration":1,"replicas":${n},"readyReplicas":${n},"currentReplicas":${n},"updatedReplicas":${n},` +
      `"currentRevision":${q(oldRev)},"updateRevision":${q(oldRev)},"collisionCount":0,"availableReplicas":${n}}},`,
  );
  parts.push(
    `"revisions":[{"kind":"ControllerRevision","apiVersion":"apps/v1","metadata":{"name":${q(oldRev)},"namespace":"default",` +
      `"uid":"rev-1","resourceVersion":"100","creationTimestamp":"2026-04-01T00:00:00Z","labels":{"app":"web","controller.kubernetes.io/hash":"7b9c6d5f4"},` +
      `"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":${q(uid)},"controller":true,"blockOwnerDeletion":true}]},` +
      `"data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[${container('0.27')}],${podSpecTail}}}}},"revision":1}],`,
  );
  parts.push('"pods":[');
  for (let i = 0; i < n; i++) {
    if (i > 0) parts.push(',');
    const name = `web-${i}`;
    const octet = i % 250, third = Math.floor(i / 250);
    parts.push(
      `{"kind":"Pod","apiVersion":"v1","metadata":{"name":${q(name)},"generateName":"web-","namespace":"default",` +
        `"uid":"pod-${pad(i, 8)}-0000-4000-8000-000000000000","resourceVersion":"${1000 + i}","creationTimestamp":"2026-04-01T00:${pad(Math.floor(i / 60) % 60, 2)}:${pad(i % 60, 2)}Z",` +
        `"labels":{"app":"web","apps.kubernetes.io/pod-index":"${i}","controller-revision-hash":${q(oldRev)},"statefulset.kubernetes.io/pod-name":${q(name)}},` +
        `"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":${q(uid)},"controller":true,"blockOwnerDeletion":true}]},` +
        `"spec":{"containers":[${container('0.27')}],${podSpecTail},"nodeName":"node-${i % 16}","hostname":${q(name)},"subdomain":"web","serviceAccountName":"default",` +
        `"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},` +
        `{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},` +
        `"status":{"phase":"Running","conditions":[` +
        `{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},` +
        `{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},` +
        `{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},` +
        `{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"},` +
        `{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-04-01T01:00:00Z"}],` +
        `"hostIP":"10.0.0.${octet}","podIP":"10.244.${third}.${octet}","podIPs":[{"ip":"10.244.${third}.${octet}"}],"startTime":"2026-04-01T01:00:00Z",` +
        `"containerStatuses":[{"name":"nginx","state":{"running":{"startedAt":"2026-04-01T01:00:01Z"}},"lastState":{},"ready":true,"restartCount":0,` +
        `"image":"registry.k8s.io/nginx-slim:0.27","imageID":"registry.k8s.io/nginx-slim@sha256:0000000000000000000000000000000000000000000000000000000000000000",` +
        `"containerID":"containerd://${pad(i, 64)}","started":true}],"qosClass":"BestEffort"}}`,
    );
  }
  parts.push(']}');
  return new TextEncoder().encode(parts.join(''));
}

// Runs fn until minTime has passed (after one warm-up call); returns ms per call.
async function measure(fn) {
  await fn();
  let n = 0;
  const start = performance.now();
  do {
    await fn();
    n++;
  } while (performance.now() - start < minTime);
  return { n, ms: (performance.now() - start) / n };
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  const path = values.module;
  const timeoutMs = 60_000; // a bound, generous for a loaded machine
  const worker = await loadOrdinal({ path, timeoutMs });
  const main = await loadOrdinal({ path, timeoutMs: 0 });
  const sdk = JSON.parse(readFileSync(new URL('./node_modules/@extism/extism/package.json', import.meta.url), 'utf8'));
  console.log(`Node host: node ${process.version}, @extism/extism ${sdk.version}, module ${worker.describe.module} ${worker.describe.moduleVersion}; ms per reconcile call`);
  console.log('pods  snapshot        sha256/12    mode         calls   ms/call   MB/s');
  for (const n of sizes) {
    const snap = rollingUpdateSnapshot(n);
    const sum = createHash('sha256').update(snap).digest('hex').slice(0, 12);
    const row = (mode, r) =>
      console.log(
        `${String(n).padStart(4)}  ${String(snap.length).padStart(9)} B  ${sum}  ${mode.padEnd(11)} ${String(r.n).padStart(6)}  ${r.ms.toFixed(3).padStart(8)}  ${(snap.length / 1e3 / r.ms).toFixed(1).padStart(6)}`,
      );
    const cases = {
      worker: () => worker.reconcile(snap),
      'main-thread': () => main.reconcile(snap),
      'new-host': async () => {
        const o = await loadOrdinal({ path, timeoutMs });
        try {
          await o.reconcile(snap);
        } finally {
          await o.close();
        }
      },
    };
    for (const [mode, fn] of Object.entries(cases)) {
      try {
        row(mode, await measure(fn));
      } catch (e) {
        console.log(`${String(n).padStart(4)}  ${mode}: failed: ${e.message}`);
        process.exitCode = 1;
      }
    }
  }
  await Promise.all([worker.close(), main.close()]);
  process.exit(process.exitCode); // see reconcile.mjs: the SDK leaves timeout timers pending
}
