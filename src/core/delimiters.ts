/**
 * The delimiters of template text (Jinja's, or an action's options': kubernetes.core's `template`
 * with `variable_start_string`, …): declared here, on the ground floor, for the module contract
 * (`ModuleContext.render`) and the template lexer alike.
 */
/**
 * The delimiters of a template: Jinja's by default; an action's options may set others
 * (kubernetes.core's `template: {path, variable_start_string: '[[', variable_end_string: ']]'}`).
 */
export interface Delimiters {
  variableStart: string;
  variableEnd: string;
  blockStart: string;
  blockEnd: string;
  commentStart: string;
  commentEnd: string;
}

/** Jinja's own delimiters. */
export const JINJA_DELIMITERS: Readonly<Delimiters> = { variableStart: '{{', variableEnd: '}}', blockStart: '{%', blockEnd: '%}', commentStart: '{#', commentEnd: '#}' };
