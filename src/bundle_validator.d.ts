/**
 * The interface of `lib/bundle_validator.js`: the published bundle schema
 * (`olympus_jupyter/report/bundle.schema.json`) as Ajv standalone code, generated at
 * build time by `scripts/build-validator.mjs` (so there is no `.ts` source for it).
 */

/** One way the data breaks the schema, as Ajv reports it. */
export interface ISchemaError {
  /** JSON Pointer to the value, e.g. `/stage_table/2/name` (`''`: the whole bundle). */
  instancePath: string;
  /** The rule that failed, e.g. `#/definitions/stage_info/properties/name/pattern`. */
  schemaPath: string;
  /** `type`, `maxLength`, `pattern`, `enum`, `required`, `oneOf`, ... */
  keyword: string;
  params: Record<string, unknown>;
  /** Set on the errors of a `propertyNames` rule: the key that broke it. */
  propertyName?: string;
  message?: string;
}

export interface IBundleValidator {
  (data: unknown): boolean;
  /** The errors of the last call that returned false (the first one found). */
  errors?: ISchemaError[] | null;
}

declare const validate: IBundleValidator;
export default validate;
