import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { parse } from 'yaml';
import { API_PREFIX } from '../../src/api/types.js';

/**
 * Checks responses against openapi.yaml: the status is one the operation documents (or the
 * document's RouteMissing / MethodNotAllowed for paths and methods the API does not have), the
 * required headers are there and well formed, the content type is the documented one, and a
 * JSON body validates against the documented schema.
 */

const OPENAPI_PATH = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

/** One response as a test saw it. `path` is the full path (with /api/v1), without the query. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: unknown;
  /** What was sent, when the test knows it: an answer of 2xx says the request was accepted. */
  request?: { headers: Record<string, string | undefined>; body: string };
}

type Json = Record<string, unknown>;

// ajv-formats is CommonJS; under NodeNext its default import may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

const DOC_ID = 'openapi.json';

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export class OpenApiValidator {
  readonly doc: Json;
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Each path template, and whether it lives under /api/v1 (the default server) or at the origin. */
  private readonly templates: { template: string; regex: RegExp; underApi: boolean }[];

  constructor(path = OPENAPI_PATH) {
    this.doc = parse(readFileSync(path, 'utf8')) as Json;
    // strict off: the document is OpenAPI, not a bare schema, so it has keywords Ajv does not know.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema(this.doc, DOC_ID);
    this.templates = Object.entries(this.paths()).map(([template, item]) => {
      const servers = item.servers as { url: string }[] | undefined;
      return {
        template,
        regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
        underApi: servers === undefined || servers.some((s) => new URL(s.url).pathname.startsWith(API_PREFIX)),
      };
    });
  }

  paths(): Record<string, Json> {
    return this.doc.paths as Record<string, Json>;
  }

  /** Follows a local `$ref` (and returns the pointer it ends at, for compiling schemas by reference). */
  resolve(node: Json, pointer: string): { node: Json; pointer: string } {
    let current = node;
    let at = pointer;
    for (let i = 0; i < 10 && typeof current.$ref === 'string'; i++) {
      const ref = current.$ref;
      if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported: ${ref}`);
      at = ref.slice(1);
      current = ref
        .slice(2)
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((acc, key) => (acc as Json | undefined)?.[key], this.doc) as Json;
      if (current === undefined) throw new Error(`unresolved $ref ${ref}`);
    }
    return { node: current, pointer: at };
  }

  private validator(pointer: string): ValidateFunction {
    let fn = this.compiled.get(pointer);
    if (!fn) {
      fn = this.ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      this.compiled.set(pointer, fn);
    }
    return fn;
  }

  /** The path template of openapi.yaml a served path falls under, or null. */
  template(fullPath: string): string | null {
    const underApi = fullPath === API_PREFIX || fullPath.startsWith(`${API_PREFIX}/`);
    const relative = underApi ? fullPath.slice(API_PREFIX.length) || '/' : fullPath;
    return this.templates.find((t) => t.underApi === underApi && t.regex.test(relative))?.template ?? null;
  }

  /** Problems with one exchange; empty when it matches the document. */
  check(ex: Exchange): string[] {
    const where = `${ex.method} ${ex.path} → ${ex.status}`;
    const template = this.template(ex.path);
    let responsePointer: string;
    if (template === null) {
      if (ex.status === 404) responsePointer = '/components/responses/RouteMissing';
      else return [`${where}: no path in openapi.yaml matches, and the status is not 404`];
    } else {
      const method = ex.method.toLowerCase();
      const item = this.paths()[template]!;
      const operation = item[method] as Json | undefined;
      if (!operation) {
        if (ex.status === 405) responsePointer = '/components/responses/MethodNotAllowed';
        else return [`${where}: openapi.yaml has no ${method} operation on ${template}, and the status is not 405`];
      } else {
        const responses = operation.responses as Json;
        if (!(String(ex.status) in responses)) return [`${where}: status ${ex.status} is not documented for ${method} ${template}`];
        responsePointer = `/paths/${escapePointer(template)}/${method}/responses/${ex.status}`;
      }
    }
    const problems: string[] = template === null ? [] : this.checkRequest(ex, template, where);
    const { node: response, pointer } = this.resolve({ $ref: `#${responsePointer}` }, responsePointer);

    for (const [name, raw] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const { node: header, pointer: headerPointer } = this.resolve(raw, `${pointer}/headers/${escapePointer(name)}`);
      const value = ex.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required === true) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      const schema = header.schema as Json;
      const typed =
        this.resolve(schema, `${headerPointer}/schema`).node.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      const fn = this.validator(`${headerPointer}/schema`);
      if (!fn(typed)) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(fn.errors)}`);
    }

    const content = response.content as Record<string, Json> | undefined;
    if (content) {
      const contentType = (ex.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (!(contentType in content)) {
        problems.push(`${where}: content type ${JSON.stringify(contentType)} is not one of ${Object.keys(content).join(', ')}`);
      } else if (contentType === 'application/json') {
        const fn = this.validator(`${pointer}/content/${escapePointer(contentType)}/schema`);
        if (!fn(ex.body)) problems.push(`${where}: body ${this.ajv.errorsText(fn.errors)}: ${JSON.stringify(ex.body).slice(0, 300)}`);
      }
    }
    return problems;
  }

  /**
   * A request the API accepted (2xx) is one the document allows: its JSON body validates against
   * the operation's request schema, and its header parameters against theirs. (The other way,
   * what the document allows and the API refuses, is the contract suite's own business.)
   */
  private checkRequest(ex: Exchange, template: string, where: string): string[] {
    const method = ex.method.toLowerCase();
    const operation = this.paths()[template]?.[method] as Json | undefined;
    if (ex.request === undefined || operation === undefined || ex.status < 200 || ex.status >= 300) return [];
    const problems: string[] = [];
    const at = `/paths/${escapePointer(template)}/${method}`;
    ((operation.parameters ?? []) as Json[]).forEach((raw, i) => {
      const { node: parameter, pointer } = this.resolve(raw, `${at}/parameters/${i}`);
      const value = ex.request!.headers[String(parameter.name).toLowerCase()];
      if (parameter.in !== 'header' || value === undefined) return;
      const fn = this.validator(`${pointer}/schema`);
      if (!fn(value))
        problems.push(`${where}: accepted header ${String(parameter.name)} ${JSON.stringify(value)}: ${this.ajv.errorsText(fn.errors)}`);
    });
    if (operation.requestBody !== undefined) {
      const fn = this.validator(`${at}/requestBody/content/application~1json/schema`);
      const body = JSON.parse(ex.request.body) as unknown;
      if (!fn(body)) problems.push(`${where}: accepted body ${ex.request.body}: ${this.ajv.errorsText(fn.errors)}`);
    }
    return problems;
  }

  /**
   * Every operation of the document with the statuses it declares, each with the name of its
   * response in components/responses (null when written in place).
   */
  operations(): { method: string; template: string; statuses: { status: number; response: string | null }[] }[] {
    return Object.entries(this.paths()).flatMap(([template, item]) =>
      ['get', 'post', 'put', 'patch', 'delete']
        .filter((method) => item[method] !== undefined)
        .map((method) => ({
          method: method.toUpperCase(),
          template,
          statuses: Object.entries((item[method] as Json).responses as Record<string, Json>).map(([status, r]) => ({
            status: Number(status),
            response: typeof r.$ref === 'string' ? r.$ref.split('/').pop()! : null,
          })),
        })),
    );
  }
}
