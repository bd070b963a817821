/**
 * Evaluated inputs → what the action receives: declaration defaults applied, then checked against
 * the same schema the validator used at load time (so a computed Limit of 500 fails its step the
 * way a literal one fails validation).
 */
import { ActionError } from '../common/errors.js';
import type { ActionDeclaration } from '../connectors/types.js';
import { checkInputValue, syntaxProblems } from '../definition/input-checks.js';

export function prepareInputs(action: ActionDeclaration, evaluated: unknown): Record<string, unknown> {
  const given = (evaluated && typeof evaluated === 'object' ? evaluated : {}) as Record<string, unknown>;
  const inputs: Record<string, unknown> = {};
  for (const [name, decl] of Object.entries(action.inputs)) {
    let value = given[name];
    if ((value === undefined || value === null) && decl.default !== undefined) value = decl.default;
    if (value === undefined || value === null) {
      if (decl.required) throw new ActionError(`input "${name}" is required but has no value`, { code: 'invalid_input' });
      continue;
    }
    const checked = checkInputValue(action, name, value);
    if ('problem' in checked) throw new ActionError(`input "${name}" ${checked.problem}`, { code: 'invalid_input' });
    const [bad] = syntaxProblems(decl, checked.value);
    if (bad) throw new ActionError(`input "${name}": ${bad.problem}`, { code: 'invalid_input' });
    inputs[name] = checked.value;
  }
  for (const name of Object.keys(given)) {
    if (!(name in action.inputs) && given[name] !== undefined) {
      throw new ActionError(`unknown input "${name}"; inputs of ${action.key}: ${Object.keys(action.inputs).join(', ')}`, { code: 'invalid_input' });
    }
  }
  return inputs;
}
