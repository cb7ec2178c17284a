#!/usr/bin/env node
// Offline validation of infra/deploy: Kubernetes manifests (kustomize base, db and overlays), the
// Prometheus configurations and rules, the Grafana dashboard and its provisioning files.
//
//   NODE_PATH=DIR/node_modules node infra/deploy/validate/validate.js [--metrics FILE] [--quiet]
//
// Needs the npm packages kubernetes-models@4 and js-yaml@4 (package.json next to this file; the
// tests install them into var/cache/). No cluster, no kustomize binary: each kustomization is
// rendered by the small kustomize subset below (resources, namespace, labels, images, patches as
// strategic merges, configMap/secret generators with hashed names and the references to them), then
// every object is checked against the Kubernetes OpenAPI schema of kubernetes-models - including
// fields the schema does not know, which the plain validate() lets through - and cross-checked
// (selectors, named ports, Secrets/ConfigMaps and Services referenced, HPA target, probes, scrape
// annotations). --metrics FILE (a GET /metrics dump of sutlab) makes every metric the dashboard and
// the recording rules query exist there.
//
// Exit status 0 when everything holds, 1 with one line per problem otherwise.
"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");

let yaml;
try {
  yaml = require("js-yaml");
  require("kubernetes-models/apps/v1/Deployment");
} catch (e) {
  console.error("validate.js: needs the npm packages js-yaml@4 and kubernetes-models@4 on NODE_PATH (" + e.message + ")");
  process.exit(2);
}

const DEPLOY = path.resolve(__dirname, "..");
const ROOT = path.resolve(DEPLOY, "..", "..");
const args = process.argv.slice(2);
let metricsFile = null;
let quiet = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--metrics") metricsFile = args[++i];
  else if (args[i] === "--quiet") quiet = true;
  else { console.error("usage: validate.js [--metrics FILE] [--quiet]"); process.exit(2); }
}

const errors = [];
const err = (where, msg) => errors.push(`${where}: ${msg}`);
const ok = (msg) => { if (!quiet) console.log("ok: " + msg); };
const rel = (p) => path.relative(ROOT, p);
const clone = (v) => JSON.parse(JSON.stringify(v));
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function loadYamlDocs(file) {
  const text = fs.readFileSync(file, "utf8");
  try {
    return yaml.loadAll(text).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    err(rel(file), "YAML: " + e.message.split("\n")[0]);
    return [];
  }
}

// ---- Kubernetes schema validation -------------------------------------------------------------

function modelFor(apiVersion, kind) {
  try {
    const mod = require(`kubernetes-models/${apiVersion}/${kind}`);
    return mod[kind] || null;
  } catch (e) {
    return null;
  }
}

// Runs the model's schema validation on a proxy of the object and reports the properties the
// validator never read: fields the schema does not define (typos such as "readinesProbe").
// Objects whose keys the validator enumerated (maps: labels, annotations, data, resources) pass.
function unknownFields(Model, plain) {
  const seen = new Map();
  const wrap = (v) => {
    if (v === null || typeof v !== "object") return v;
    let s = seen.get(v);
    if (!s) { s = new Set(); seen.set(v, s); }
    return new Proxy(v, {
      get(t, p, r) { if (typeof p === "string") s.add(p); return wrap(Reflect.get(t, p, r)); },
      ownKeys(t) { s.add("*"); return Reflect.ownKeys(t); },
      has(t, p) { if (typeof p === "string") s.add(p); return Reflect.has(t, p); },
    });
  };
  let error = null;
  try { Model.prototype.validate.call(wrap(plain)); } catch (e) { error = e; }
  const unknown = [];
  const walk = (v, where) => {
    if (v === null || typeof v !== "object") return;
    const s = seen.get(v);
    if (!s) return; // not descended into (free-form)
    for (const k of Object.keys(v)) {
      if (!Array.isArray(v) && !s.has("*") && !s.has(k)) unknown.push(where + "/" + k);
      walk(v[k], where + "/" + k);
    }
  };
  if (!error) walk(plain, "");
  return { error, unknown };
}

function validateObject(obj, where) {
  if (!isObj(obj) || typeof obj.apiVersion !== "string" || typeof obj.kind !== "string") {
    err(where, "not a Kubernetes object (apiVersion/kind missing)");
    return false;
  }
  const id = `${obj.kind}/${(obj.metadata || {}).name}`;
  const Model = modelFor(obj.apiVersion, obj.kind);
  if (!Model) { err(where, `${id}: unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`); return false; }
  const { error, unknown } = unknownFields(Model, clone(obj));
  if (error) {
    const details = (error.errors || []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
    err(where, `${id}: ${details || error.message}`);
    return false;
  }
  if (unknown.length) { err(where, `${id}: fields unknown to the ${obj.apiVersion} ${obj.kind} schema: ${unknown.join(", ")}`); return false; }
  if (!obj.metadata || !obj.metadata.name) { err(where, `${obj.kind} without metadata.name`); return false; }
  return true;
}

// ---- a small kustomize --------------------------------------------------------------------------

const KUSTOMIZATION_KEYS = new Set(["apiVersion", "kind", "namespace", "labels", "commonLabels",
  "resources", "configMapGenerator", "secretGenerator", "generatorOptions", "patches", "images"]);
const MERGE_KEYS = { containers: "name", initContainers: "name", env: "name", envFrom: null,
  volumes: "name", volumeMounts: "mountPath", imagePullSecrets: "name" };

function mergeKeyFor(field, items) {
  if (field === "ports") {
    if (items.every((i) => isObj(i) && "containerPort" in i)) return "containerPort";
    if (items.every((i) => isObj(i) && "port" in i)) return "port";
    return null;
  }
  return MERGE_KEYS[field] || null;
}

function strategicMerge(target, patch, where) {
  for (const key of Object.keys(patch)) {
    const pv = patch[key];
    if (key.startsWith("$")) { err(where, `patch directive ${key} is not supported by this validator`); continue; }
    if (pv === null) { delete target[key]; continue; }
    const tv = target[key];
    if (Array.isArray(pv) && Array.isArray(tv)) {
      const mk = mergeKeyFor(key, pv.concat(tv));
      if (!mk) { target[key] = clone(pv); continue; }
      for (const item of pv) {
        const hit = tv.find((t) => isObj(t) && t[mk] === item[mk]);
        if (hit) strategicMerge(hit, item, where); else tv.push(clone(item));
      }
    } else if (isObj(pv) && isObj(tv)) {
      strategicMerge(tv, pv, where);
    } else {
      target[key] = clone(pv);
    }
  }
}

function podSpecOf(obj) {
  if (!isObj(obj.spec)) return null;
  if (obj.kind === "CronJob") return (((obj.spec.jobTemplate || {}).spec || {}).template || {}).spec || null;
  if (isObj(obj.spec.template)) return obj.spec.template.spec || null;
  return null;
}

function podTemplateOf(obj) {
  if (obj.kind === "CronJob") return ((obj.spec.jobTemplate || {}).spec || {}).template || null;
  return isObj(obj.spec) && isObj(obj.spec.template) ? obj.spec.template : null;
}

function allContainers(spec) {
  return [].concat(spec.containers || [], spec.initContainers || []);
}

// Calls fn(kind, name, setter) for every ConfigMap/Secret reference of a pod spec.
function eachConfigRef(spec, fn) {
  for (const v of spec.volumes || []) {
    if (v.configMap) fn("ConfigMap", v.configMap.name, (n) => { v.configMap.name = n; });
    if (v.secret) fn("Secret", v.secret.secretName, (n) => { v.secret.secretName = n; });
  }
  for (const c of allContainers(spec)) {
    for (const ef of c.envFrom || []) {
      if (ef.configMapRef) fn("ConfigMap", ef.configMapRef.name, (n) => { ef.configMapRef.name = n; });
      if (ef.secretRef) fn("Secret", ef.secretRef.name, (n) => { ef.secretRef.name = n; });
    }
    for (const e of c.env || []) {
      const vf = e.valueFrom || {};
      if (vf.configMapKeyRef) fn("ConfigMap", vf.configMapKeyRef.name, (n) => { vf.configMapKeyRef.name = n; });
      if (vf.secretKeyRef) fn("Secret", vf.secretKeyRef.name, (n) => { vf.secretKeyRef.name = n; });
    }
  }
}

function parseEnvFile(file, where) {
  const out = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const t = line.trim();
    if (!t || t.startsWith("#")) continue;
    const i = t.indexOf("=");
    if (i <= 0) { err(where, `${rel(file)}: not KEY=VALUE: ${t}`); continue; }
    out.push([t.slice(0, i), t.slice(i + 1)]);
  }
  return out;
}

function generate(gen, kind, dir, where, disableHash) {
  const data = {};
  for (const lit of gen.literals || []) {
    const i = lit.indexOf("=");
    if (i <= 0) { err(where, `${kind} ${gen.name}: literal without KEY=: ${lit}`); continue; }
    data[lit.slice(0, i)] = lit.slice(i + 1);
  }
  for (const envf of gen.envs || []) {
    const file = path.resolve(dir, envf);
    if (!fs.existsSync(file)) { err(where, `${kind} ${gen.name}: env file ${envf} is missing`); continue; }
    for (const [k, v] of parseEnvFile(file, where)) data[k] = v;
  }
  for (const spec of gen.files || []) {
    const i = spec.indexOf("=");
    const key = i > 0 ? spec.slice(0, i) : path.basename(spec);
    const file = path.resolve(dir, i > 0 ? spec.slice(i + 1) : spec);
    if (!fs.existsSync(file)) { err(where, `${kind} ${gen.name}: file ${rel(file)} is missing`); continue; }
    data[key] = fs.readFileSync(file, "utf8");
  }
  // A generator that takes files from a directory of Python modules must take all of them (the
  // locustfiles import their siblings).
  const dirs = new Set((gen.files || []).map((f) => path.dirname(path.resolve(dir, f.includes("=") ? f.slice(f.indexOf("=") + 1) : f))));
  for (const d of dirs) {
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).filter((n) => n.endsWith(".py"))) {
      if (!(f in data)) err(where, `${kind} ${gen.name}: ${rel(path.join(d, f))} is not in the generator (add it to files:)`);
    }
  }
  if (!gen.name) { err(where, `${kind} generator without a name`); }
  const obj = { apiVersion: "v1", kind, metadata: { name: gen.name } };
  if (kind === "Secret") {
    obj.type = gen.type || "Opaque";
    obj.data = {};
    for (const [k, v] of Object.entries(data)) obj.data[k] = Buffer.from(v).toString("base64");
  } else {
    obj.data = data;
  }
  const opts = gen.options || {};
  const hashed = !(disableHash || opts.disableNameSuffixHash);
  if (hashed) {
    const h = crypto.createHash("sha256").update(JSON.stringify([kind, obj.data])).digest("hex").slice(0, 10);
    obj.metadata.name = `${gen.name}-${h}`;
  }
  return { obj, from: gen.name };
}

// build(dir) -> { objects: [{obj, file}], generated: {"Kind/name": newName} }
function build(dir, stack) {
  stack = stack || [];
  const kfile = path.join(dir, "kustomization.yaml");
  const where = rel(kfile);
  if (stack.includes(dir)) { err(where, "kustomization cycle"); return { objects: [] }; }
  if (!fs.existsSync(kfile)) { err(rel(dir), "no kustomization.yaml"); return { objects: [] }; }
  const docs = loadYamlDocs(kfile);
  if (docs.length !== 1 || !isObj(docs[0])) { err(where, "one YAML document expected"); return { objects: [] }; }
  const k = docs[0];
  for (const key of Object.keys(k)) {
    if (!KUSTOMIZATION_KEYS.has(key)) err(where, `field ${key} is not handled by this validator's renderer`);
  }
  if (k.apiVersion !== "kustomize.config.k8s.io/v1beta1" || k.kind !== "Kustomization") {
    err(where, "apiVersion kustomize.config.k8s.io/v1beta1, kind Kustomization expected");
  }
  let objects = [];
  for (const r of k.resources || []) {
    const p = path.resolve(dir, r);
    if (!fs.existsSync(p)) { err(where, `resource ${r} does not exist`); continue; }
    if (fs.statSync(p).isDirectory()) {
      objects = objects.concat(build(p, stack.concat([dir])).objects);
    } else {
      for (const d of loadYamlDocs(p)) objects.push({ obj: d, file: rel(p) });
    }
  }
  const disableHash = !!(k.generatorOptions || {}).disableNameSuffixHash;
  const renamed = {};
  for (const [field, kind] of [["configMapGenerator", "ConfigMap"], ["secretGenerator", "Secret"]]) {
    for (const gen of k[field] || []) {
      const { obj, from } = generate(gen, kind, dir, where, disableHash);
      renamed[`${kind}/${from}`] = obj.metadata.name;
      objects.push({ obj, file: where + ` (${field} ${from})` });
    }
  }
  for (const p of k.patches || []) {
    if (!isObj(p) || !p.path || p.target || p.patch) { err(where, "only `patches: - path: FILE` (strategic merge) is handled"); continue; }
    const pfile = path.resolve(dir, p.path);
    if (!fs.existsSync(pfile)) { err(where, `patch ${p.path} does not exist`); continue; }
    for (const patch of loadYamlDocs(pfile)) {
      const name = ((patch || {}).metadata || {}).name;
      const targets = objects.filter((o) => o.obj.kind === patch.kind && (o.obj.metadata || {}).name === name &&
        o.obj.apiVersion === patch.apiVersion);
      if (targets.length !== 1) { err(rel(pfile), `patch for ${patch.apiVersion} ${patch.kind}/${name} matches ${targets.length} objects`); continue; }
      const body = clone(patch);
      delete body.apiVersion; delete body.kind;
      if (body.metadata) { delete body.metadata.name; }
      strategicMerge(targets[0].obj, body, rel(pfile));
    }
  }
  // references to generated names (also in objects of the bases)
  for (const o of objects) {
    const spec = podSpecOf(o.obj);
    if (!spec) continue;
    eachConfigRef(spec, (kind, name, set) => {
      if (renamed[`${kind}/${name}`]) set(renamed[`${kind}/${name}`]);
    });
  }
  for (const img of k.images || []) {
    for (const o of objects) {
      const spec = podSpecOf(o.obj);
      if (!spec) continue;
      for (const c of allContainers(spec)) {
        const base = String(c.image || "").replace(/@.*$/, "").replace(/:[^/:]*$/, "");
        if (base === img.name) c.image = (img.newName || img.name) + (img.digest ? "@" + img.digest : (img.newTag ? ":" + img.newTag : ""));
      }
    }
  }
  if (k.namespace) {
    for (const o of objects) { o.obj.metadata = o.obj.metadata || {}; o.obj.metadata.namespace = k.namespace; }
  }
  const addLabels = (pairs, selectors) => {
    for (const o of objects) {
      o.obj.metadata = o.obj.metadata || {};
      o.obj.metadata.labels = Object.assign({}, o.obj.metadata.labels, pairs);
      if (!selectors) continue;
      const tpl = podTemplateOf(o.obj);
      if (tpl) { tpl.metadata = tpl.metadata || {}; tpl.metadata.labels = Object.assign({}, tpl.metadata.labels, pairs); }
      if (o.obj.kind === "Service" && o.obj.spec) o.obj.spec.selector = Object.assign({}, o.obj.spec.selector, pairs);
      if (o.obj.spec && isObj(o.obj.spec.selector) && isObj(o.obj.spec.selector.matchLabels)) {
        Object.assign(o.obj.spec.selector.matchLabels, pairs);
      }
    }
  };
  for (const l of k.labels || []) addLabels(l.pairs || {}, !!l.includeSelectors);
  if (k.commonLabels) addLabels(k.commonLabels, true);
  return { objects };
}

// ---- cross-checks on a rendered kustomization ---------------------------------------------------

function matches(selector, labels) {
  return Object.entries(selector || {}).every(([k, v]) => (labels || {})[k] === v);
}

function checkRender(name, objects, complete) {
  const where = `render ${name}`;
  const byKey = new Map();
  for (const { obj } of objects) {
    const key = `${obj.kind}/${(obj.metadata || {}).name}`;
    if (byKey.has(key)) err(where, `${key} defined twice`);
    byKey.set(key, obj);
  }
  const workloads = objects.map((o) => o.obj).filter((o) => podTemplateOf(o));
  for (const w of workloads) {
    const id = `${w.kind}/${w.metadata.name}`;
    const tpl = podTemplateOf(w);
    const spec = podSpecOf(w) || {};
    if (w.spec.selector && !matches(w.spec.selector.matchLabels, (tpl.metadata || {}).labels)) {
      err(where, `${id}: selector does not match the pod template's labels`);
    }
    for (const c of allContainers(spec)) {
      if (!c.resources || !c.resources.requests || !c.resources.limits) err(where, `${id}: container ${c.name} without resource requests and limits`);
      if (!c.image) err(where, `${id}: container ${c.name} without image`);
      for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"]) {
        const hg = (c[probe] || {}).httpGet;
        if (hg && typeof hg.port === "string" && !(c.ports || []).some((p) => p.name === hg.port)) {
          err(where, `${id}: ${probe} uses port ${hg.port}, which container ${c.name} does not name`);
        }
      }
      for (const vm of c.volumeMounts || []) {
        if (!(spec.volumes || []).some((v) => v.name === vm.name) &&
            !((w.spec.volumeClaimTemplates || []).some((t) => t.metadata.name === vm.name))) {
          err(where, `${id}: volumeMount ${vm.name} has no volume`);
        }
      }
    }
    eachConfigRef(spec, (kind, ref) => {
      if (!byKey.has(`${kind}/${ref}`) && complete) err(where, `${id}: ${kind} ${ref} is referenced but not defined`);
    });
    if (w.kind === "StatefulSet" && !byKey.has(`Service/${w.spec.serviceName}`)) {
      err(where, `${id}: serviceName ${w.spec.serviceName} is not a Service here`);
    }
  }
  for (const { obj } of objects.filter((o) => o.obj.kind === "Service")) {
    const id = `Service/${obj.metadata.name}`;
    const pods = workloads.filter((w) => matches(obj.spec.selector, (podTemplateOf(w).metadata || {}).labels));
    if (!obj.spec.selector || pods.length === 0) { err(where, `${id}: its selector matches no workload`); continue; }
    for (const p of obj.spec.ports || []) {
      if (typeof p.targetPort !== "string") continue;
      const named = pods.some((w) => allContainers(podSpecOf(w)).some((c) => (c.ports || []).some((cp) => cp.name === p.targetPort)));
      if (!named) err(where, `${id}: targetPort ${p.targetPort} is named by no container it selects`);
    }
  }
  for (const { obj } of objects.filter((o) => o.obj.kind === "HorizontalPodAutoscaler")) {
    const t = obj.spec.scaleTargetRef;
    if (!byKey.has(`${t.kind}/${t.name}`)) err(where, `HorizontalPodAutoscaler/${obj.metadata.name}: target ${t.kind}/${t.name} is not defined`);
  }
  return byKey;
}

function findContainer(obj, name) {
  return ((podSpecOf(obj) || {}).containers || []).find((c) => c.name === name);
}

// What the deployment must do for sutlab, whatever the overlay.
function checkSutlab(name, byKey, complete) {
  const where = `render ${name}`;
  const dep = byKey.get("Deployment/sutlab");
  if (!dep) { err(where, "no Deployment/sutlab"); return; }
  const c = findContainer(dep, "sutlab");
  if (!c) { err(where, "Deployment/sutlab has no container sutlab"); return; }
  const port = (c.ports || []).find((p) => p.name === "http");
  if (!port) err(where, "sutlab: no container port named http");
  const probe = (p) => ((c[p] || {}).httpGet || {}).path;
  if (probe("readinessProbe") !== "/readyz") err(where, "sutlab: readinessProbe must GET /readyz");
  if (probe("livenessProbe") !== "/health_check") err(where, "sutlab: livenessProbe must GET /health_check");
  const ann = (dep.spec.template.metadata || {}).annotations || {};
  if (ann["prometheus.io/scrape"] !== "true" || ann["prometheus.io/path"] !== "/metrics" ||
      !port || ann["prometheus.io/port"] !== String(port.containerPort)) {
    err(where, "sutlab: pod template needs prometheus.io/scrape=true, /path=/metrics, /port=the http port");
  }
  const env = Object.fromEntries((c.env || []).map((e) => [e.name, e.value]));
  if (!env.SUTLAB_LISTEN || !port || !env.SUTLAB_LISTEN.endsWith(":" + port.containerPort)) {
    err(where, "sutlab: SUTLAB_LISTEN must listen on the http container port");
  }
  for (const k of Object.keys(env)) if (!/^SUTLAB_[A-Z0-9_]+$/.test(k)) err(where, `sutlab: unexpected env ${k}`);
  if (!/^sutlab:/.test(c.image)) err(where, `sutlab: image ${c.image} (the images transformer should give sutlab:TAG)`);
  const sc = dep.spec.template.spec.securityContext || {};
  if (sc.runAsNonRoot !== true) err(where, "sutlab: runAsNonRoot must be true");
  if (!byKey.get("Service/sutlab")) err(where, "no Service/sutlab");
  if (!byKey.get("HorizontalPodAutoscaler/sutlab")) err(where, "no HorizontalPodAutoscaler/sutlab");
  const job = byKey.get("Job/sutlab-seed");
  if (!job) err(where, "no Job/sutlab-seed");
  else if (!/sutlab db migrate/.test(JSON.stringify(findContainer(job, "seed") || {})) ||
           !/sutlab db seed/.test(JSON.stringify(findContainer(job, "seed") || {}))) {
    err(where, "Job/sutlab-seed must migrate and seed");
  }
  // distributed Locust
  const master = byKey.get("Deployment/locust-master");
  const worker = byKey.get("Deployment/locust-worker");
  if (!master || !worker) { err(where, "Locust needs Deployment/locust-master and Deployment/locust-worker"); return; }
  const margs = (findContainer(master, "locust") || {}).args || [];
  const wargs = (findContainer(worker, "locust") || {}).args || [];
  if (!margs.includes("--master")) err(where, "locust-master: --master missing");
  if (!wargs.includes("--worker")) err(where, "locust-worker: --worker missing");
  const mh = wargs[wargs.indexOf("--master-host") + 1];
  const msvc = byKey.get(`Service/${mh}`);
  if (!msvc) err(where, `locust-worker: --master-host ${mh} is not a Service`);
  else {
    if (!matches(msvc.spec.selector, master.spec.template.metadata.labels)) err(where, `Service/${mh} does not select locust-master`);
    if (!(msvc.spec.ports || []).some((p) => p.port === 5557)) err(where, `Service/${mh} does not expose 5557`);
  }
  const host = margs[margs.indexOf("--host") + 1] || "";
  const svcName = host.replace(/^https?:\/\//, "").replace(/[:/].*$/, "");
  if (!byKey.get(`Service/${svcName}`)) err(where, `locust-master: --host ${host} is not a Service`);
  const lf = margs[margs.indexOf("-f") + 1] || "";
  const vols = (podSpecOf(master).volumes || []).filter((v) => v.configMap);
  const cm = vols.length && byKey.get(`ConfigMap/${vols[0].configMap.name}`);
  if (!cm || !Object.keys(cm.data || {}).includes(path.basename(lf))) err(where, `locust-master: ${lf} is not in the mounted ConfigMap`);
  if (complete) {
    const sec = [...byKey.values()].find((o) => o.kind === "Secret" && o.metadata.name.startsWith("sutlab-db"));
    if (!sec) { err(where, "no sutlab-db Secret"); return; }
    const data = Object.fromEntries(Object.entries(sec.data || {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]));
    for (const k of ["SUTLAB_DB_URL", "SUTLAB_REDIS_URL"]) if (!data[k]) err(where, `Secret sutlab-db lacks ${k}`);
    // In-cluster services named in the URLs must exist with that port.
    for (const [k, scheme] of [["SUTLAB_DB_URL", /^postgres(ql)?:$/], ["SUTLAB_REDIS_URL", /^rediss?:$/]]) {
      let u;
      try { u = new URL(data[k]); } catch (e) { err(where, `Secret sutlab-db ${k} is not a URL`); continue; }
      if (!scheme.test(u.protocol)) err(where, `Secret sutlab-db ${k}: scheme ${u.protocol}`);
      if (!u.hostname.includes(".")) {
        const svc = byKey.get(`Service/${u.hostname}`);
        if (!svc) err(where, `${k} names host ${u.hostname}, which is not a Service here`);
        else if (!(svc.spec.ports || []).some((p) => String(p.port) === (u.port || (k === "SUTLAB_DB_URL" ? "5432" : "6379")))) {
          err(where, `${k}: Service ${u.hostname} does not expose port ${u.port}`);
        }
      }
    }
  }
}

function validateK8s() {
  const k8s = path.join(DEPLOY, "k8s");
  // 1. every YAML document of every file parses; whole objects (not patches) are validated alone
  const patchFiles = new Set();
  const kdirs = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === "kustomization.yaml") kdirs.push(d);
    }
  };
  walk(k8s);
  for (const d of kdirs) {
    const k = loadYamlDocs(path.join(d, "kustomization.yaml"))[0] || {};
    for (const p of k.patches || []) if (p && p.path) patchFiles.add(path.resolve(d, p.path));
  }
  let files = 0, docs = 0;
  const walkFiles = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { walkFiles(p); continue; }
      if (!/\.ya?ml$/.test(e.name)) continue;
      files++;
      for (const doc of loadYamlDocs(p)) {
        docs++;
        if (e.name === "kustomization.yaml" || patchFiles.has(p) || !isObj(doc) || !doc.apiVersion) continue;
        validateObject(doc, rel(p));
      }
    }
  };
  walkFiles(k8s);
  ok(`k8s: ${files} YAML files, ${docs} documents parsed; whole objects schema-checked`);
  // 2. render each kustomization and validate the result
  for (const d of kdirs.sort()) {
    const name = rel(d);
    const before = errors.length;
    const { objects } = build(d);
    for (const { obj, file } of objects) validateObject(obj, `${name} <- ${file}`);
    const complete = d.includes(path.join("k8s", "overlays"));
    const byKey = checkRender(name, objects, complete);
    if (byKey.has("Deployment/sutlab")) checkSutlab(name, byKey, complete);
    if (errors.length === before) {
      const kinds = {};
      for (const { obj } of objects) kinds[obj.kind] = (kinds[obj.kind] || 0) + 1;
      ok(`${name}: ${objects.length} objects (${Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(", ")})`);
    }
  }
  const overlays = kdirs.filter((d) => d.includes(path.join("k8s", "overlays")));
  if (overlays.length < 2) err("k8s", "expected at least two overlays");
}

// ---- Prometheus and Grafana ---------------------------------------------------------------------

let metricFamilies = null;
if (metricsFile) {
  metricFamilies = new Set();
  for (const line of fs.readFileSync(metricsFile, "utf8").split("\n")) {
    const m = /^# TYPE (\S+) (\S+)/.exec(line);
    if (m) metricFamilies.add(m[1]);
  }
  if (metricFamilies.size === 0) err(metricsFile, "no # TYPE lines: not a /metrics dump");
}

const RECORDED = new Set();

function metricsOf(expr) {
  const names = new Set();
  const re = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{|\[)/g;
  let m;
  while ((m = re.exec(expr))) names.add(m[1]);
  const lv = /label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/g;
  while ((m = lv.exec(expr))) names.add(m[1]);
  return [...names];
}

function checkExpr(expr, where) {
  if (typeof expr !== "string" || !expr.trim()) { err(where, "empty expression"); return; }
  let depth = 0;
  for (const ch of expr) { if ("({[".includes(ch)) depth++; if (")}]".includes(ch)) depth--; if (depth < 0) break; }
  if (depth !== 0) err(where, `unbalanced brackets in ${expr}`);
  const names = metricsOf(expr);
  if (names.length === 0) err(where, `no metric in ${expr}`);
  if (!metricFamilies) return;
  for (const n of names) {
    const fam = n.replace(/_(bucket|sum|count)$/, "");
    if (!metricFamilies.has(n) && !metricFamilies.has(fam) && !RECORDED.has(n)) {
      err(where, `metric ${n} is not exported by sutlab's /metrics`);
    }
  }
}

function validatePrometheus() {
  const dir = path.join(DEPLOY, "prometheus");
  const rulesFile = path.join(dir, "sutlab-rules.yml");
  const rules = loadYamlDocs(rulesFile)[0] || {};
  let nrules = 0;
  for (const g of rules.groups || []) {
    if (!g.name) err(rel(rulesFile), "group without name");
    for (const r of g.rules || []) {
      nrules++;
      if (!r.record && !r.alert) err(rel(rulesFile), "rule without record/alert");
      if (r.record && !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(r.record)) err(rel(rulesFile), `bad record name ${r.record}`);
      checkExpr(r.expr, `${rel(rulesFile)} ${r.record || r.alert}`);
      if (r.record) RECORDED.add(r.record);
    }
  }
  if (nrules === 0) err(rel(rulesFile), "no rules");
  for (const f of ["prometheus.yml", "prometheus-compose.yml", "prometheus-k8s.yml"]) {
    const file = path.join(dir, f);
    const where = rel(file);
    const c = loadYamlDocs(file)[0];
    if (!isObj(c)) { err(where, "empty"); continue; }
    for (const k of Object.keys(c)) {
      if (!["global", "rule_files", "scrape_configs", "alerting", "remote_write", "remote_read", "storage"].includes(k)) err(where, `unknown top-level key ${k}`);
    }
    for (const rf of c.rule_files || []) if (!fs.existsSync(path.resolve(dir, rf))) err(where, `rule file ${rf} missing`);
    const jobs = new Set();
    for (const sc of c.scrape_configs || []) {
      if (!sc.job_name || jobs.has(sc.job_name)) err(where, `job_name missing or repeated: ${sc.job_name}`);
      jobs.add(sc.job_name);
      const sd = ["static_configs", "dns_sd_configs", "kubernetes_sd_configs", "file_sd_configs"].filter((k) => sc[k]);
      if (sd.length === 0) err(where, `${sc.job_name}: no targets (static_configs or a service discovery)`);
      for (const st of sc.static_configs || []) {
        for (const t of st.targets || []) if (!/^[^\s:/]+:\d+$/.test(t)) err(where, `${sc.job_name}: target ${t} is not HOST:PORT`);
      }
      for (const rc of sc.relabel_configs || []) {
        if (rc.regex) { try { new RegExp("^(?:" + rc.regex + ")$"); } catch (e) { err(where, `${sc.job_name}: bad regex ${rc.regex}`); } }
      }
      if (sc.metrics_path && sc.metrics_path !== "/metrics") err(where, `${sc.job_name}: sutlab serves /metrics`);
    }
    if (!jobs.size) err(where, "no scrape_configs");
  }
  ok(`prometheus: 3 configurations, ${nrules} recording rules`);
}

function validateGrafana() {
  const dir = path.join(DEPLOY, "grafana");
  const file = path.join(dir, "sutlab-dashboard.json");
  let d;
  try { d = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { err(rel(file), "JSON: " + e.message); return; }
  if (!d.uid || !d.title || !Array.isArray(d.panels)) err(rel(file), "uid, title and panels expected");
  const ids = new Set();
  let targets = 0;
  const vars = new Set(((d.templating || {}).list || []).map((v) => v.name));
  for (const v of (d.templating || {}).list || []) {
    if (v.type === "query") checkExpr(typeof v.query === "string" ? v.query : (v.query || {}).query, `${rel(file)} variable ${v.name}`);
  }
  for (const p of d.panels || []) {
    if (ids.has(p.id)) err(rel(file), `panel id ${p.id} repeated`);
    ids.add(p.id);
    const gp = p.gridPos || {};
    if (!(gp.w > 0 && gp.h > 0 && gp.x + gp.w <= 24)) err(rel(file), `panel ${p.title}: bad gridPos`);
    if (p.type === "row") continue;
    if (!p.title || !(p.targets || []).length) err(rel(file), `panel ${p.id} needs a title and targets`);
    for (const t of p.targets || []) {
      targets++;
      checkExpr(t.expr, `${rel(file)} panel "${p.title}"`);
      for (const m of (t.expr || "").matchAll(/\$(\w+)/g)) {
        if (!m[1].startsWith("__") && !vars.has(m[1])) err(rel(file), `panel "${p.title}": variable $${m[1]} undefined`);
      }
    }
  }
  for (const f of ["provisioning/datasources/prometheus.yml", "provisioning/dashboards/sutlab.yml"]) {
    const c = loadYamlDocs(path.join(dir, f))[0];
    if (!isObj(c) || c.apiVersion !== 1) err(`${rel(dir)}/${f}`, "provisioning file with apiVersion: 1 expected");
  }
  ok(`grafana: ${(d.panels || []).length} panels, ${targets} queries${metricFamilies ? " (metric names checked against /metrics)" : ""}`);
}

validateK8s();
validatePrometheus();
validateGrafana();
if (errors.length) {
  for (const e of errors) console.error("error: " + e);
  console.error(`${errors.length} problem(s)`);
  process.exit(1);
}
console.log("all deployment files valid");
