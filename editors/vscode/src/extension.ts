// VS Code client for the trainlint language server (`trainlint server`, LSP over stdio).
//
// The extension only starts the server and forwards settings; diagnostics, quick fixes
// (including the `source.fixAll.trainlint` code action kind) and hovers come from the server.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
} from 'vscode-languageclient/node';

const SECTION = 'trainlint';
/** Settings that change how the server process is started: a change restarts it. */
const LAUNCH_KEYS = ['interpreter', 'path'];
/** Settings the server reads (initializationOptions, workspace/configuration, didChangeConfiguration). */
const SERVER_KEYS = ['gpu', 'numGpus', 'model', 'seqLen', 'select', 'ignore', 'failLevel'] as const;

/** The settings contract shared with the server; null means "use the project's [tool.trainlint] and the config". */
export interface ServerSettings {
  gpu: string | null;
  numGpus: number | null;
  model: string | null;
  seqLen: number | null;
  select: string[] | null;
  ignore: string[] | null;
  failLevel: string | null;
}

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
/** Serializes start/stop/restart so that quick setting changes cannot start two servers. */
let queue: Promise<void> = Promise.resolve();

function str(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

function positiveInt(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

function codes(value: unknown): string[] | null {
  if (!Array.isArray(value)) {
    return null;
  }
  const list = value.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
  return list.length > 0 ? list : null;
}

export function serverSettings(scope?: vscode.ConfigurationScope | null): ServerSettings {
  const config = vscode.workspace.getConfiguration(SECTION, scope ?? undefined);
  const failLevel = str(config.get('failLevel'));
  return {
    gpu: str(config.get('gpu')),
    numGpus: positiveInt(config.get('numGpus')),
    model: str(config.get('model')),
    seqLen: positiveInt(config.get('seqLen')),
    select: codes(config.get('select')),
    ignore: codes(config.get('ignore')),
    failLevel: failLevel && ['error', 'warning', 'info'].includes(failLevel) ? failLevel : null,
  };
}

function expandPath(value: string): string {
  let result = value;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder) {
    result = result.replace(/\$\{workspaceFolder\}/g, folder);
  }
  if (result === '~' || result.startsWith('~/') || result.startsWith('~\\')) {
    result = path.join(os.homedir(), result.slice(1));
  }
  return result;
}

/** Minimal view of the ms-python.python extension API (environments API, 2023+). */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}

async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!extension) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch (err) {
    output.appendLine(`Could not activate the Python extension: ${String(err)}`);
    return undefined;
  }
}

async function selectedPythonInterpreter(): Promise<string | undefined> {
  const api = await pythonExtensionApi();
  if (!api?.environments) {
    return undefined;
  }
  try {
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = api.environments.getActiveEnvironmentPath(resource);
    const resolved = await api.environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath;
  } catch (err) {
    output.appendLine(`Could not read the selected Python interpreter: ${String(err)}`);
    return undefined;
  }
}

/** The first executable `name` on PATH, or else in pipx's bin folder (`$PIPX_BIN_DIR`, default `~/.local/bin`:
 * where `pipx install` puts `trainlint`, and which a VS Code started from the desktop often lacks on its PATH). */
function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter((dir) => dir !== '');
  dirs.push(env.PIPX_BIN_DIR || path.join(os.homedir(), '.local', 'bin'));
  const suffixes = process.platform === 'win32' ? ['.exe', '.cmd', '.bat', ''] : [''];
  for (const dir of dirs) {
    for (const suffix of suffixes) {
      const candidate = path.join(expandPath(dir), name + suffix);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not there, or not executable
      }
    }
  }
  return undefined;
}

function pathOrigin(executable: string): string {
  const dirs = (process.env.PATH ?? process.env.Path ?? '').split(path.delimiter).map((dir) => expandPath(dir));
  return dirs.includes(path.dirname(executable)) ? 'PATH' : "pipx's bin folder";
}

interface ServerCommand {
  command: string;
  args: string[];
  /** Where the command came from, for messages. */
  origin: string;
  /** For an interpreter: check `import trainlint` before starting. */
  interpreter?: string;
}

async function serverCommand(): Promise<ServerCommand> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const executable = str(config.get('path'));
  if (executable) {
    return { command: expandPath(executable), args: ['server'], origin: 'setting trainlint.path' };
  }
  const configured = str(config.get('interpreter'));
  if (configured) {
    const interpreter = expandPath(configured);
    return { command: interpreter, args: ['-m', 'trainlint', 'server'], origin: 'setting trainlint.interpreter', interpreter };
  }
  const selected = await selectedPythonInterpreter();
  if (selected) {
    return { command: selected, args: ['-m', 'trainlint', 'server'], origin: 'the Python extension', interpreter: selected };
  }
  const onPath = findOnPath('trainlint');
  if (onPath) {
    return { command: onPath, args: ['server'], origin: pathOrigin(onPath) };
  }
  const fallback = process.platform === 'win32' ? 'python' : 'python3';
  return { command: fallback, args: ['-m', 'trainlint', 'server'], origin: 'default', interpreter: fallback };
}

interface ImportProblem {
  /** The interpreter itself could not be run (no such file, not executable). */
  cannotRun: boolean;
  detail: string;
}

/** Checks that `interpreter` can import trainlint; returns what went wrong, or undefined. */
function checkTrainlintImport(interpreter: string, cwd: string | undefined): Promise<ImportProblem | undefined> {
  return new Promise((resolve) => {
    execFile(
      interpreter,
      ['-c', 'import trainlint, sys; sys.stdout.write(trainlint.__version__)'],
      { cwd, timeout: 20000 },
      (error, stdout, stderr) => {
        if (!error) {
          output.appendLine(`trainlint ${stdout.trim()} found in ${interpreter}`);
          resolve(undefined);
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        const cannotRun = typeof code === 'string' && ['ENOENT', 'EACCES', 'ENOTDIR'].includes(code);
        const lines = (stderr || error.message).trim().split('\n');
        resolve({ cannotRun, detail: lines[lines.length - 1] });
      },
    );
  });
}

async function reportMissingServer(cmd: ServerCommand, problem: ImportProblem): Promise<void> {
  output.appendLine(`Cannot start trainlint with ${cmd.command} (${cmd.origin}): ${problem.detail}`);
  const selectInterpreter = 'Select Interpreter';
  const openSettings = 'Open Settings';
  const hasPython = vscode.extensions.getExtension('ms-python.python') !== undefined;
  const what = problem.cannotRun
    ? `Cannot run the Python interpreter ${cmd.command} (${cmd.origin}).`
    : `trainlint is not installed for ${cmd.command} (${cmd.origin}).`;
  const choice = await vscode.window.showErrorMessage(
    `${what} Run "<python> -m pip install git+https://github.com/trainlint/trainlint" in the environment you want, ` +
      'then set trainlint.interpreter to that Python (or trainlint.path to a trainlint executable, ' +
      'or put a trainlint executable on PATH, e.g. with pipx).',
    ...(hasPython ? [selectInterpreter, openSettings] : [openSettings]),
  );
  if (choice === selectInterpreter) {
    await vscode.commands.executeCommand('python.setInterpreter');
  } else if (choice === openSettings) {
    await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:trainlint.trainlint');
  }
}

function clientOptions(): LanguageClientOptions {
  return {
    documentSelector: [
      { scheme: 'file', language: 'yaml' },
      { scheme: 'untitled', language: 'yaml' },
      { scheme: 'file', language: 'json' },
      { scheme: 'untitled', language: 'json' },
      { scheme: 'file', language: 'jsonc' },
      { scheme: 'untitled', language: 'jsonc' },
    ],
    initializationOptions: serverSettings(vscode.workspace.workspaceFolders?.[0]?.uri),
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      workspace: {
        // Answer workspace/configuration for the `trainlint` section with the settings contract only
        // (normalized, per folder); other sections get VS Code's default answer.
        configuration: async (params, token, next) => {
          const defaults = await next(params, token);
          if (!Array.isArray(defaults)) {
            return defaults;
          }
          return params.items.map((item, i) => {
            if (item.section !== SECTION) {
              return defaults[i];
            }
            return serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined);
          });
        },
      },
    },
  };
}

async function startClient(): Promise<void> {
  let cmd = await serverCommand();
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (cmd.interpreter) {
    const problem = await checkTrainlintImport(cmd.interpreter, cwd);
    // The Python extension's interpreter (or python3) without trainlint: a `trainlint` on PATH, as pipx
    // installs it, is the next choice. An interpreter named in the settings is never second-guessed.
    const onPath = cmd.origin === 'setting trainlint.interpreter' ? undefined : findOnPath('trainlint');
    if (problem && onPath) {
      output.appendLine(`${cmd.command} (${cmd.origin}) cannot run trainlint: ${problem.detail}; using ${onPath} (${pathOrigin(onPath)})`);
      cmd = { command: onPath, args: ['server'], origin: pathOrigin(onPath) };
    } else if (problem) {
      void reportMissingServer(cmd, problem);
      return;
    }
  }
  output.appendLine(`Starting: ${cmd.command} ${cmd.args.join(' ')} (${cmd.origin})`);
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    // No `transport`: with TransportKind.stdio the client would append `--stdio` to the arguments.
    // Without it, an Executable still talks LSP over the process's stdin/stdout.
    options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
  };
  const next = new LanguageClient(SECTION, 'trainlint', serverOptions, clientOptions());
  try {
    await next.start();
    client = next;
  } catch (err) {
    output.appendLine(`The trainlint server failed to start: ${String(err)}`);
    void vscode.window.showErrorMessage(
      `The trainlint server failed to start (${cmd.command} ${cmd.args.join(' ')}). See the 'trainlint' output for details.`,
    );
    await next.dispose().catch(() => undefined);
  }
}

async function stopClient(): Promise<void> {
  const current = client;
  client = undefined;
  if (current) {
    try {
      await current.stop(5000);
    } catch (err) {
      output.appendLine(`Stopping the server: ${String(err)}`);
    }
  }
}

function enqueue(task: () => Promise<void>): Promise<void> {
  queue = queue.then(task, task).catch((err) => output.appendLine(String(err)));
  return queue;
}

function restart(): Promise<void> {
  return enqueue(async () => {
    await stopClient();
    await startClient();
  });
}

function sendSettings(): void {
  if (client?.isRunning()) {
    void client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { [SECTION]: serverSettings(vscode.workspace.workspaceFolders?.[0]?.uri) },
    });
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('trainlint');
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('trainlint.restart', () => restart()),
    vscode.commands.registerCommand('trainlint.showOutput', () => output.show()),
    // Workspace values of trainlint.interpreter/path only count once the workspace is trusted.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (LAUNCH_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
        void restart();
      } else if (SERVER_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
        sendSettings();
      }
    }),
  );

  // Start in the background: activation should not wait for the Python extension or the server.
  void restart();
  void followPythonInterpreter(context);
}

/** Restarts the server when the Python extension's interpreter changes and no setting overrides it. */
async function followPythonInterpreter(context: vscode.ExtensionContext): Promise<void> {
  const api = await pythonExtensionApi();
  if (api?.environments) {
    context.subscriptions.push(
      api.environments.onDidChangeActiveEnvironmentPath(() => {
        const config = vscode.workspace.getConfiguration(SECTION);
        if (!str(config.get('path')) && !str(config.get('interpreter'))) {
          void restart();
        }
      }),
    );
  }
}

export function deactivate(): Promise<void> {
  return enqueue(stopClient);
}
