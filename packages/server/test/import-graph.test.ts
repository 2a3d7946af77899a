/**
 * The layering of src/, read from its import statements (TypeScript's parser, so `import type`, re-exports and
 * `import()` all count): HTTP and the CLI reach storage only through use cases and the ports' role interfaces,
 * the domain imports nothing outside itself, engines never touch the database, and no two folders import each
 * other round a cycle; and the table of docs/architecture.md#layers names, row by row, exactly the folders each
 * imports. The rules are checked against fixture graphs too, so that a rule which could not fail would show here.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ARCHITECTURE = fileURLToPath(new URL('../../../../docs/architecture.md', import.meta.url));

interface ImportEdge {
  /** The importing file, relative to src/ (`http/routes/tasks.ts`). */
  readonly from: string;
  /** The imported file relative to src/, or the package's name (`fastify`, `node:fs`). */
  readonly to: string;
  /** The names imported (`Store`), empty for `import()` and `export *`. */
  readonly names: readonly string[];
}

/** Units of the graph: each folder of src/, and each file at its root. */
function unitOf(path: string): string {
  const [first, ...rest] = path.split('/');
  return rest.length === 0 ? (first as string) : `${first}/`;
}

/** The unit whose rules a file follows: its folder's, or its own for the CLI's wiring. */
function layerOf(path: string): string {
  return CLI_ROOTS.includes(path) ? path : unitOf(path);
}

const DOMAIN = ['domain/'];
const PORTS = ['ports/'];
/** Leaf modules any layer may use. */
const SHARED = ['config.ts', 'logger.ts', 'metrics.ts', 'version.ts'];
/** Helpers of the use cases and engines: files, media, outbound HTTP, the process's own folders. */
const SUPPORT = ['assets/', 'media/', 'outbound/', 'process/'];
const USE_CASES = ['accounts/', 'tasks/', 'files/', 'usage/', 'models/', 'runner/', 'webhooks/'];
const ADAPTERS = ['store/', 'storage/', 'engines/'];
const DELIVERY = ['http/', 'cli/'];
/** Wires adapters to use cases. */
const COMPOSITION_ROOT = ['service.ts', 'adapters.ts'];
/**
 * The CLI's own wiring, held to the composition root's rules rather than the CLI's: opening the store for the
 * store commands (it takes the whole port, to migrate and close it), starting the service, building engines.
 */
const CLI_ROOTS = ['cli/store-session.ts', 'cli/serve-command.ts', 'cli/engines-command.ts'];

/** What each unit may import, besides itself and packages. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = Object.fromEntries([
  ...DOMAIN.map((unit) => [unit, DOMAIN]),
  ...PORTS.map((unit) => [unit, DOMAIN]),
  ['config.ts', []],
  ['logger.ts', []],
  ['version.ts', []],
  ['metrics.ts', [...DOMAIN, ...PORTS]],
  ...SUPPORT.map((unit) => [unit, [...DOMAIN, ...PORTS, ...SHARED, ...SUPPORT]]),
  ...USE_CASES.map((unit) => [unit, [...DOMAIN, ...PORTS, ...SHARED, ...SUPPORT, ...USE_CASES]]),
  ['store/', [...DOMAIN, ...PORTS, ...SHARED]],
  ['storage/', [...DOMAIN, ...PORTS, ...SHARED]],
  ['engines/', [...DOMAIN, ...PORTS, ...SHARED, ...SUPPORT]],
  ['http/', [...DOMAIN, ...PORTS, ...SHARED, ...USE_CASES]],
  ['cli/', [...DOMAIN, ...PORTS, ...SHARED, ...USE_CASES, 'outbound/']],
  ...[...COMPOSITION_ROOT, ...CLI_ROOTS].map((unit) => [
    unit,
    [...DOMAIN, ...PORTS, ...SHARED, ...SUPPORT, ...USE_CASES, ...ADAPTERS, ...DELIVERY, ...COMPOSITION_ROOT],
  ]),
]);

/** Packages the domain may use: Node's own modules and the schema library its validation is written in. */
function domainPackage(name: string): boolean {
  return name.startsWith('node:') || name === '@sinclair/typebox' || name.startsWith('@sinclair/typebox/');
}

/** The whole `Store` port: HTTP, the CLI and the use cases name the role interfaces they use instead (ports/store.ts). */
const WHOLE_PORTS = new Set(['ports/store.ts#Store']);

/** A role of the store (`ApiKeyStore`, `StoreLifecycle`) rather than a record it returns (`DashboardSession`). */
function isStoreRole(name: string): boolean {
  return /Store$|^Store/.test(name);
}

function layerViolations(edges: readonly ImportEdge[]): string[] {
  const found: string[] = [];
  for (const edge of edges) {
    const from = layerOf(edge.from);
    const allowed = ALLOWED[from];
    if (!allowed) {
      found.push(`${edge.from}: ${from} is in no layer (add it to the import-graph test's table)`);
      continue;
    }
    if (!edge.to.includes('.ts')) {
      if (from === 'domain/' && !domainPackage(edge.to))
        found.push(`${edge.from} imports the package ${edge.to}`);
      continue;
    }
    const to = unitOf(edge.to);
    if (to !== unitOf(edge.from) && !allowed.includes(to))
      found.push(`${edge.from} imports ${edge.to} (${from} -> ${to})`);
    if (DELIVERY.includes(from) || USE_CASES.includes(from)) {
      for (const name of edge.names) {
        if (WHOLE_PORTS.has(`${edge.to}#${name}`)) found.push(`${edge.from} imports the whole port ${name}`);
      }
    }
    if (from === 'http/' && edge.to === 'ports/store.ts') {
      for (const name of edge.names.filter(isStoreRole))
        found.push(`${edge.from} takes the store role ${name} (routes hold use cases, not the store)`);
    }
  }
  return found;
}

/** Cycles between units, each as `a -> b -> a`. */
function unitCycles(edges: readonly ImportEdge[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const edge of edges) {
    if (!edge.to.includes('.ts')) continue;
    const [from, to] = [unitOf(edge.from), unitOf(edge.to)];
    if (from !== to) next.set(from, (next.get(from) ?? new Set()).add(to));
  }
  const cycles = new Set<string>();
  const done = new Set<string>();
  const visit = (unit: string, path: string[]) => {
    const at = path.indexOf(unit);
    if (at >= 0) {
      const loop = path.slice(at);
      // One rotation of each cycle: the one starting at its least unit.
      const start = loop.indexOf([...loop].sort()[0] as string);
      const rotated = [...loop.slice(start), ...loop.slice(0, start)];
      cycles.add([...rotated, rotated[0]].join(' -> '));
      return;
    }
    if (done.has(unit)) return;
    for (const to of next.get(unit) ?? []) visit(to, [...path, unit]);
    done.add(unit);
  };
  for (const unit of next.keys()) visit(unit, []);
  return [...cycles].sort();
}

/** What each unit imports from other units (`http/` → `tasks/`, `domain/`, …), from the graph's edges. */
function unitImports(edges: readonly ImportEdge[]): Map<string, Set<string>> {
  const imports = new Map<string, Set<string>>();
  for (const edge of edges) {
    if (!edge.to.includes('.ts')) continue;
    const [from, to] = [unitOf(edge.from), unitOf(edge.to)];
    if (from !== to) imports.set(from, (imports.get(from) ?? new Set()).add(to));
  }
  return imports;
}

/**
 * The table "Folder or file | Imports" of docs/architecture.md: each row's units (its first column may name
 * several, `usage/`, `models/`) and the units its second column names in backticks; words between them
 * ("(key limits)") are the reader's, and backticked names that are not units of src/ are left out.
 */
function documentedImports(markdown: string, units: ReadonlySet<string>): Map<string, Set<string>> {
  const lines = markdown.split('\n');
  const header = lines.findIndex((line) => /^\| Folder or file \| Imports \|$/.test(line));
  assert.ok(header >= 0, 'docs/architecture.md has the table "Folder or file | Imports"');
  const table = new Map<string, Set<string>>();
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [folders = '', imported = ''] = line.slice(1, -1).split('|');
    const named = (cell: string) =>
      [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string).filter((name) => units.has(name));
    for (const unit of named(folders)) table.set(unit, new Set(named(imported)));
  }
  return table;
}

/** Where the table and the imports differ, a line each. */
function tableDrift(
  table: ReadonlyMap<string, Set<string>>,
  imports: ReadonlyMap<string, Set<string>>,
): string[] {
  const found: string[] = [];
  for (const [unit, actual] of imports) {
    const documented = table.get(unit);
    if (!documented) {
      found.push(`${unit} has no row (it imports ${[...actual].sort().join(', ')})`);
      continue;
    }
    for (const to of [...actual].sort())
      if (!documented.has(to)) found.push(`${unit} imports ${to}, which its row does not name`);
  }
  for (const [unit, documented] of table) {
    for (const to of [...documented].sort())
      if (!imports.get(unit)?.has(to)) found.push(`${unit}'s row names ${to}, which it does not import`);
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function importsOf(file: string): ImportEdge[] {
  const from = relative(SRC, file).split('\\').join('/');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const edges: ImportEdge[] = [];
  const add = (specifier: string, names: string[]) => {
    const to = specifier.startsWith('.')
      ? posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts')
      : specifier;
    edges.push({ from, to, names });
  };
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const names: string[] = [];
      const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
      if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) {
        for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
      }
      add(node.moduleSpecifier.text, names);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, []);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal))
        add(literal.text, node.qualifier ? [node.qualifier.getText(source)] : []);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

const graph = sourceFiles(SRC).flatMap(importsOf);

describe('the import graph of src/', () => {
  it('reads the imports (a parser that saw none would pass everything)', () => {
    assert.ok(graph.length > 500, `only ${graph.length} imports found`);
    assert.ok(graph.some((edge) => edge.from === 'service.ts' && edge.to === 'adapters.ts'));
    assert.ok(
      graph.some((edge) => edge.from === 'cli/main.ts' && edge.to === 'cli/serve-command.ts'),
      'import()',
    );
    const resolved = graph.filter((edge) => edge.to.endsWith('.ts'));
    const missing = resolved.filter((edge) => {
      try {
        readFileSync(resolve(SRC, edge.to));
        return false;
      } catch {
        return true;
      }
    });
    assert.deepEqual(missing, [], 'every relative import resolves to a file of src/');
  });

  it('keeps every import within its layer', () => {
    assert.deepEqual(layerViolations(graph), []);
  });

  it('has no cycle between folders', () => {
    assert.deepEqual(unitCycles(graph), []);
  });

  it('is the one docs/architecture.md draws, row by row', () => {
    const units = new Set(
      graph
        .flatMap((edge) => [edge.from, edge.to])
        .filter((path) => path.endsWith('.ts'))
        .map(unitOf),
    );
    const table = documentedImports(readFileSync(ARCHITECTURE, 'utf8'), units);
    assert.ok(table.has('http/') && table.has('service.ts'), 'the table is read');
    assert.deepEqual(tableDrift(table, unitImports(graph)), []);
  });
});

describe('the import-graph rules, on fixture graphs', () => {
  const edge = (from: string, to: string, names: string[] = []): ImportEdge => ({ from, to, names });

  it('refuses a route that imports a store adapter, and one that takes the whole Store port', () => {
    assert.deepEqual(layerViolations([edge('http/routes/tasks.ts', 'store/sqlite/sqlite-store.ts')]), [
      'http/routes/tasks.ts imports store/sqlite/sqlite-store.ts (http/ -> store/)',
    ]);
    assert.deepEqual(
      layerViolations([edge('cli/keys-command.ts', 'ports/store.ts', ['ApiKeyStore', 'Store'])]),
      ['cli/keys-command.ts imports the whole port Store'],
    );
    assert.deepEqual(layerViolations([edge('http/app.ts', 'storage/s3-storage.ts')]).length, 1);
    assert.deepEqual(layerViolations([edge('http/app.ts', 'tasks/task-service.ts', ['TaskService'])]), []);
    assert.equal(layerViolations([edge('cli/keys-command.ts', 'adapters.ts', ['openStore'])]).length, 1);
    assert.equal(layerViolations([edge('tasks/task-service.ts', 'ports/store.ts', ['Store'])]).length, 1);
    assert.deepEqual(layerViolations([edge('cli/store-session.ts', 'adapters.ts', ['openStore'])]), []);
  });

  it('refuses an HTTP module that takes a store role, and lets it name the records', () => {
    assert.deepEqual(layerViolations([edge('http/authentication.ts', 'ports/store.ts', ['ApiKeyStore'])]), [
      'http/authentication.ts takes the store role ApiKeyStore (routes hold use cases, not the store)',
    ]);
    assert.equal(
      layerViolations([edge('http/routes/health.ts', 'ports/store.ts', ['StoreLifecycle'])]).length,
      1,
    );
    assert.deepEqual(layerViolations([edge('http/app.ts', 'ports/store.ts', ['DashboardSession'])]), []);
  });

  it('refuses a domain module that imports outside domain/, or a framework', () => {
    assert.equal(layerViolations([edge('domain/task.ts', 'ports/store.ts')]).length, 1);
    assert.equal(layerViolations([edge('domain/task.ts', 'fastify')]).length, 1);
    assert.deepEqual(
      layerViolations([edge('domain/task.ts', 'domain/errors.ts'), edge('domain/x.ts', 'node:crypto')]),
      [],
    );
  });

  it('refuses an engine that imports the store, a use case that imports an engine, and a folder in no layer', () => {
    assert.equal(layerViolations([edge('engines/local/local-engine.ts', 'store/kysely-store.ts')]).length, 1);
    assert.equal(layerViolations([edge('models/model-list.ts', 'engines/engines-file.ts')]).length, 1);
    assert.equal(layerViolations([edge('helpers/misc.ts', 'domain/task.ts')]).length, 1);
  });

  it('finds where the architecture table and the imports differ', () => {
    const imports = unitImports([
      edge('http/app.ts', 'tasks/task-service.ts'),
      edge('http/app.ts', 'domain/task.ts'),
      edge('tasks/task-service.ts', 'domain/task.ts'),
      edge('files/file-service.ts', 'domain/task.ts'),
      edge('media/probe.ts', 'domain/task.ts'),
    ]);
    const table = documentedImports(
      [
        '| Folder or file | Imports |',
        '|---|---|',
        '| `domain/` | nothing outside itself |',
        '| `http/` | `domain/`, `tasks/` (the service), `webhooks/` |',
        '| `tasks/`, `files/` | `domain/` |',
        '',
        '| `media/` | `ports/` |',
      ].join('\n'),
      new Set(['domain/', 'http/', 'tasks/', 'files/', 'webhooks/', 'media/', 'ports/']),
    );
    assert.deepEqual(tableDrift(table, imports), [
      'media/ has no row (it imports domain/)',
      "http/'s row names webhooks/, which it does not import",
    ]);
  });

  it('finds a cycle between folders, once', () => {
    assert.deepEqual(
      unitCycles([
        edge('assets/a.ts', 'engines/b.ts'),
        edge('engines/b.ts', 'media/c.ts'),
        edge('media/c.ts', 'assets/d.ts'),
        edge('engines/e.ts', 'domain/f.ts'),
      ]),
      ['assets/ -> engines/ -> media/ -> assets/'],
    );
    assert.deepEqual(
      unitCycles([edge('assets/a.ts', 'engines/b.ts'), edge('assets/c.ts', 'engines/d.ts')]),
      [],
    );
  });
});
