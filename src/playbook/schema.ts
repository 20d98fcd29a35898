/**
 * The playbook JSON Schemas the loader validates against, made from the keyword declarations of
 * `syntax.ts`: `basePlaybookSchema()` (task module arguments are checked per module, with better
 * messages), one play, one `import_playbook` entry, the task keywords. The editor schema built
 * from the same declarations is in `editor-schema.ts`.
 */
import type { JsonSchema } from '../core/module.js';
import { FQCN_IMPORT_PLAYBOOK, ImportPlaybookKeywords, PLAY_KEYS, PlayKeywords, TaskKeywords } from './syntax.js';

/** Schema validated at load time: structure of plays; tasks are checked one by one in code. */
export function basePlaybookSchema(): JsonSchema {
  // One object for the whole process: compiled validators are cached by schema identity.
  basePlaybook ??= {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'array',
    items: {
      anyOf: [
        ImportPlaybookKeywords,
        ...FQCN_IMPORT_PLAYBOOK,
        { $ref: '#/definitions/play' },
      ],
    },
    definitions: { play: PlayKeywords, task: { type: 'object' } },
  };
  return basePlaybook;
}
let basePlaybook: JsonSchema | undefined;

/** Schema of one play (validated per entry, so an error is about the play, not about `import_playbook`). */
export function playEntrySchema(): JsonSchema {
  playEntry ??= { ...PlayKeywords, definitions: { task: { type: 'object' } } };
  return playEntry;
}
let playEntry: JsonSchema | undefined;

/** Schema of one `- import_playbook: file` entry. */
export function importEntrySchema(): JsonSchema {
  return ImportPlaybookKeywords;
}

/** The keys a play accepts. */
export function playKeys(): string[] {
  return [...PLAY_KEYS];
}

/** Schema of one task's keywords (module key excluded). */
export function taskKeywordSchema(): JsonSchema {
  return TaskKeywords;
}
