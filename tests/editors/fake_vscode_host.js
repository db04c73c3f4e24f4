// Loads the bundled VS Code extension (dist/extension.js) in plain Node with a stand-in for the
// `vscode` module, activates it, changes a setting, and deactivates it. The language server it
// starts is whatever the settings name (the test points trainlint.interpreter at a Python whose
// `-m trainlint server` is a recording stub). Only the client side is real here: VS Code itself
// cannot run in CI, so the stand-in implements just what the extension and vscode-languageclient
// touch, and answers everything else with inert objects.
//
// Environment: EXTENSION_JS, WORKSPACE (folder path), SETTINGS (JSON object of trainlint.* values
// without the prefix), CHANGED_SETTINGS (JSON, applied after start and announced as a
// configuration change), STUB_DIR (where the stub server writes its records), WAIT_MS, and
// RESULT (a JSON summary is written here).
'use strict';

const Module = require('module');
const path = require('path');
const fs = require('fs');
const { pathToFileURL, fileURLToPath } = require('url');

const log = [];
const settings = JSON.parse(process.env.SETTINGS || '{}');
const changedSettings = JSON.parse(process.env.CHANGED_SETTINGS || '{}');
const workspacePath = process.env.WORKSPACE;

// An object that accepts any use: property reads, calls and `new` give another inert object.
function inert(name) {
  const target = function () {};
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === 'then') return undefined; // not a promise
      if (prop === Symbol.iterator) return function* () {};
      if (prop === Symbol.toPrimitive) return () => `<${name}>`;
      if (prop === 'dispose') return () => undefined;
      return inert(`${name}.${String(prop)}`);
    },
    apply() {
      return inert(`${name}()`);
    },
    construct() {
      return inert(`new ${name}`);
    },
  });
}

class Disposable {
  constructor(fn) {
    this._fn = fn;
  }
  static from(...items) {
    return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose()));
  }
  dispose() {
    if (this._fn) this._fn();
    this._fn = undefined;
  }
}

class EventEmitter {
  constructor() {
    this.listeners = [];
    this.event = (listener, thisArg) => {
      const entry = thisArg ? listener.bind(thisArg) : listener;
      this.listeners.push(entry);
      return new Disposable(() => (this.listeners = this.listeners.filter((l) => l !== entry)));
    };
  }
  fire(value) {
    this.listeners.slice().forEach((l) => l(value));
  }
  dispose() {
    this.listeners = [];
  }
}

class Uri {
  constructor(scheme, fsPath) {
    this.scheme = scheme;
    this.fsPath = fsPath;
    this.path = fsPath;
  }
  static file(p) {
    return new Uri('file', p);
  }
  static parse(value) {
    return value.startsWith('file:') ? new Uri('file', fileURLToPath(value)) : new Uri(value.split(':')[0], value);
  }
  toString() {
    return this.scheme === 'file' ? pathToFileURL(this.fsPath).href : this.path;
  }
  toJSON() {
    return this.toString();
  }
  with() {
    return this;
  }
}

const configChange = new EventEmitter();
const outputChannel = (name) => ({
  name,
  append: (text) => log.push(text),
  appendLine: (text) => log.push(text),
  replace: () => undefined,
  clear: () => undefined,
  show: () => undefined,
  hide: () => undefined,
  dispose: () => undefined,
});

function getConfiguration(section) {
  const prefix = section ? `${section}.` : '';
  return {
    get(key, fallback) {
      const full = prefix + key;
      if (full.startsWith('trainlint.')) {
        const value = settings[full.slice('trainlint.'.length)];
        return value === undefined ? fallback : value;
      }
      return fallback;
    },
    has: () => false,
    inspect: () => undefined,
    update: async () => undefined,
  };
}

const workspaceFolder = { uri: Uri.file(workspacePath), name: path.basename(workspacePath), index: 0 };

const vscode = new Proxy(
  {
    Disposable,
    EventEmitter,
    Uri,
    CancellationTokenSource: class {
      constructor() {
        this.token = { isCancellationRequested: false, onCancellationRequested: () => new Disposable() };
      }
      cancel() {}
      dispose() {}
    },
    workspace: new Proxy(
      {
        workspaceFolders: [workspaceFolder],
        textDocuments: [],
        notebookDocuments: [],
        isTrusted: true,
        getConfiguration,
        getWorkspaceFolder: () => workspaceFolder,
        onDidChangeConfiguration: configChange.event,
      },
      { get: (t, p) => (p in t ? t[p] : inert(`workspace.${String(p)}`)) },
    ),
    window: new Proxy(
      {
        createOutputChannel: outputChannel,
        showErrorMessage: async (...args) => {
          log.push(`showErrorMessage: ${args[0]}`);
          return undefined;
        },
        showWarningMessage: async () => undefined,
        showInformationMessage: async () => undefined,
        activeTextEditor: undefined,
        visibleTextEditors: [],
        tabGroups: { all: [] },
      },
      { get: (t, p) => (p in t ? t[p] : inert(`window.${String(p)}`)) },
    ),
    extensions: { getExtension: () => undefined, all: [] },
    commands: new Proxy(
      { registerCommand: (id) => (log.push(`registerCommand ${id}`), new Disposable()) },
      { get: (t, p) => (p in t ? t[p] : inert(`commands.${String(p)}`)) },
    ),
    env: { language: 'en', appName: 'fake', machineId: 'fake', sessionId: 'fake', uriScheme: 'vscode' },
    version: '1.82.0',
  },
  { get: (t, p) => (p in t ? t[p] : inert(`vscode.${String(p)}`)) },
);

const originalLoad = Module._load;
Module._load = function (request, ...rest) {
  return request === 'vscode' ? vscode : originalLoad.call(this, request, ...rest);
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The stub server writes its record (argv, initialize params, answers, notifications) to
// STUB_DIR/<pid>.json after every event.
function records() {
  const dir = process.env.STUB_DIR;
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')));
}

async function until(predicate, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate(records())) return true;
    await sleep(50);
  }
  return false;
}

async function main() {
  const wait = Number(process.env.WAIT_MS || 15000);
  const extension = require(path.resolve(process.env.EXTENSION_JS));
  const context = { subscriptions: [], extensionPath: path.dirname(path.dirname(process.env.EXTENSION_JS)) };
  const result = { exports: Object.keys(extension).sort() };
  await extension.activate(context);
  result.activated = true;
  const configured = (r) => r.filter((x) => x.configuration !== undefined).length;
  result.started = await until((r) => configured(r) >= 1, wait);
  if (Object.keys(changedSettings).length > 0) {
    Object.assign(settings, changedSettings);
    const affects = (name) => Object.keys(changedSettings).some((k) => name === 'trainlint' || name === `trainlint.${k}`);
    configChange.fire({ affectsConfiguration: affects });
    result.notified = await until((r) => r.some((x) => (x.didChangeConfiguration || []).length > 0), 2000);
    result.restarted = await until((r) => configured(r) >= 2, result.notified ? 500 : wait);
  }
  await extension.deactivate();
  await sleep(200);
  result.log = log;
  result.servers = records();
  fs.writeFileSync(process.env.RESULT, JSON.stringify(result, null, 2));
}

main().then(
  () => process.exit(0),
  (err) => {
    fs.writeFileSync(process.env.RESULT, JSON.stringify({ error: String(err && err.stack ? err.stack : err), log }, null, 2));
    process.exit(1);
  },
);
