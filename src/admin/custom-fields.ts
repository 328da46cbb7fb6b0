// svc-admin field: the custom fields of projects and tasks.
import { ORG, ROLES_HINT, need, list, bool, type CommandGroup } from './command.ts';

const OBJECTS = ['project', 'task'] as const;
const FIELD_TYPES = ['text', 'number', 'date', 'boolean', 'select', 'multi_select', 'member'] as const;

export const customFieldCommands: CommandGroup = {
  name: 'field',
  summary: 'Custom fields of projects and tasks',
  commands: {
    define: {
      summary: 'Define a custom field, or redefine one with the same --api-name',
      prints: '{"object_type","api_name","schema_version"}',
      flags: [
        ORG,
        { name: 'object', required: true, values: OBJECTS, description: 'Object the field belongs to' },
        { name: 'api-name', value: 'NAME', required: true, description: 'Key of the field in the API' },
        { name: 'label', value: 'TEXT', required: true, description: 'Label shown to users' },
        { name: 'type', required: true, values: FIELD_TYPES, description: 'Field type' },
        { name: 'required', kind: 'boolean', description: 'A value is required (default false)' },
        { name: 'options', kind: 'list', value: 'VALUE:LABEL,…', description: 'Choices of select and multi_select, e.g. gold:Gold,silver:Silver' },
        { name: 'readable-roles', kind: 'list', value: 'ROLES', description: `Roles that may read it: ${ROLES_HINT} (default all)` },
        { name: 'writable-roles', kind: 'list', value: 'ROLES', description: 'Roles that may write it, among the readable ones (default manager)' },
        { name: 'filterable', kind: 'boolean', description: 'Lists may filter by it (default false)' },
        { name: 'sortable', kind: 'boolean', description: 'Lists may sort by it (default false)' },
        { name: 'position', kind: 'integer', value: 'N', description: 'Display position (default 0)' },
      ],
      run: async (sql, f) => {
        // --options value:Label,value2:Label 2
        const options = (list(f.options) ?? []).map((o) => {
          const [value, ...label] = o.split(':');
          return { value: value!, label: label.length ? label.join(':') : value! };
        });
        const [r] = await sql`select control.field_define(${need(f, 'org')}, ${need(f, 'object')}, ${need(f, 'api-name')},
          ${need(f, 'label')}, ${need(f, 'type')}, ${bool(f, 'required')}, ${sql.json(options)}, ${list(f['readable-roles'])}::text[],
          ${list(f['writable-roles'])}::text[], ${bool(f, 'filterable')}, ${bool(f, 'sortable')}, ${f.position ? Number(f.position) : null}::integer)
          as schema_version`;
        return { object_type: f.object, api_name: f['api-name'], schema_version: r!.schema_version };
      },
    },
    delete: {
      summary: 'Delete a custom field',
      prints: '{"object_type","api_name","deleted","schema_version"}',
      flags: [
        ORG,
        { name: 'object', required: true, values: OBJECTS, description: 'Object the field belongs to' },
        { name: 'api-name', value: 'NAME', required: true, description: 'Key of the field in the API' },
      ],
      run: async (sql, f) => {
        const [r] = await sql`select control.field_delete(${need(f, 'org')}, ${need(f, 'object')}, ${need(f, 'api-name')}) as schema_version`;
        return { object_type: f.object, api_name: f['api-name'], deleted: true, schema_version: r!.schema_version };
      },
    },
  },
};
