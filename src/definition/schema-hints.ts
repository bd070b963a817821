/**
 * Editor hints generated into schemas/integration.schema.json from the action declarations:
 * the list of action keys (completion of `action:`) and, per action, its inputs with their
 * descriptions (completion and hover under `inputs:`). The hints only annotate — they add no
 * validation, which the loader does itself so that expressions and env values are accepted
 * where a type is expected. `hcm-runner docs` writes them; a test fails when they are stale.
 */
import type { ActionDeclaration } from '../connectors/types.js';
import { describeInput } from './action-schema.js';

type Json = Record<string, unknown>;

export function applySchemaHints(schema: Json, actions: readonly ActionDeclaration[]): Json {
  const copy = structuredClone(schema) as Json & { $defs: Record<string, Json> };
  const step = copy.$defs.step as Json & { properties: Record<string, Json> };
  step.properties.action = { ...step.properties.action, examples: actions.map((a) => a.key) };
  step.allOf = actions.map((a) => ({
    if: { type: 'object', properties: { action: { const: a.key } }, required: ['action'] },
    then: {
      type: 'object',
      properties: { inputs: { type: 'object', description: `${a.name}: ${a.description}${resultsHint(a)}`, properties: inputHints(a) } },
    },
  }));
  return copy;
}

/** What `$steps.<id>` holds after the step, from the declared output. */
function resultsHint(a: ActionDeclaration): string {
  if (!a.output) return '';
  const keys = a.output.keys ? ` Keys: ${a.output.keys.join(', ')}.` : '';
  return ` Results ($steps.<id>): ${a.output.description}${keys}`;
}

function inputHints(action: ActionDeclaration): Json {
  return Object.fromEntries(
    Object.entries(action.inputs).map(([name, decl]) => {
      const facts = [describeInput(decl)];
      if (decl.required) facts.push('required');
      if (decl.default !== undefined) facts.push(`default ${JSON.stringify(decl.default)}`);
      const label = decl.label ? `${decl.label} — ` : '';
      return [name, { description: `${label}${decl.description ? `${decl.description} ` : ''}(${facts.join('; ')})` }];
    }),
  );
}
