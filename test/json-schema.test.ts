import { describe, expect, it } from 'vitest';
import { ArgumentValidator, checkFunctionDefinition, describeProblems, normaliseSchema } from '../core/json-schema.ts';

const eclipse = {
  name: 'NightSkyAnalysis_performEclipseAnalysis',
  description: 'Analyzes solar eclipses.',
  parameters: {
    type: 'object',
    properties: {
      dateRange: {
        description: 'The range of dates.',
        type: 'object',
        properties: { startDate: { type: 'string', format: 'date' }, endDate: { type: 'string', format: 'date' } },
        required: ['startDate', 'endDate'],
      },
      latitude: { description: 'Latitude.', type: 'number', minimum: -90, maximum: 90 },
      eclipseType: { description: 'Type.', type: 'string', enum: ['total', 'annular', 'partial'] },
      stops: { description: 'Stops.', type: 'array', items: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    },
    required: ['dateRange', 'latitude'],
  },
};

describe('function definitions', () => {
  it('accepts a usable definition, aliased types included', () => {
    expect(checkFunctionDefinition(eclipse)).toEqual([]);
    expect(checkFunctionDefinition({ name: 'turn_on_wifi', description: 'Turn on WiFi.', parameters: { type: 'dict', required: [], properties: {} } })).toEqual([]);
  });

  it('names the path of each problem', () => {
    const broken = structuredClone(eclipse) as any;
    broken.parameters.required.push('longitude');
    broken.parameters.properties.dateRange.required = ['startDate', 'until'];
    broken.parameters.properties.latitude.minimum = 100;
    broken.parameters.properties.eclipseType.enum = ['total', 3];
    delete broken.parameters.properties.stops.items;
    broken.parameters.properties.latitude.description = '';
    const paths = checkFunctionDefinition(broken).map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'parameters.required[2]',
        'parameters.properties.dateRange.required[1]',
        'parameters.properties.latitude.minimum',
        'parameters.properties.eclipseType.enum[1]',
        'parameters.properties.stops.items',
        'parameters.properties.latitude.description',
      ]),
    );
    expect(describeProblems(checkFunctionDefinition(broken))).toContain('"longitude" is not among the properties');
  });

  it('refuses what is not a function definition', () => {
    expect(checkFunctionDefinition([])[0]!.message).toMatch(/JSON object/);
    expect(checkFunctionDefinition({ name: 'x y', description: 'd', parameters: { type: 'object', properties: {} } })[0]!.path).toBe('name');
    expect(checkFunctionDefinition({ name: 'f', description: 'd', arguments: {} }).map((p) => p.path)).toEqual(['parameters']);
    expect(checkFunctionDefinition({ name: 'f', description: 'd', parameters: { type: 'object', properties: { a: { type: 'text', description: 'a' } } } })[0]!.message).toMatch(/unknown type "text"/);
  });
});

describe('call arguments', () => {
  const validator = new ArgumentValidator();
  const good = { dateRange: { startDate: '2023-01-01', endDate: '2028-01-01' }, latitude: 37.98, eclipseType: 'total', stops: [{ city: 'Athens' }] };

  it('accepts arguments that satisfy the schema', () => {
    expect(validator.validate(eclipse.parameters, good)).toEqual([]);
  });

  it('reports each violation with its argument path', () => {
    const problems = validator.validate(eclipse.parameters, {
      dateRange: { startDate: '01/01/2023' },
      latitude: 120,
      eclipseType: 'ring',
      stops: [{ town: 'Athens' }],
      colour: 'red',
    });
    const lines = problems.map((p) => `${p.path}: ${p.message}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        'dateRange: required argument "endDate" is missing',
        'dateRange.startDate: must match format "date"',
        'latitude: must be <= 90',
        'eclipseType: must be one of ["total","annular","partial"]',
        'stops[0]: required argument "city" is missing',
        'stops[0]: "town" is not a parameter of this function',
        ': "colour" is not a parameter of this function',
      ]),
    );
  });

  it('reads benchmark type aliases and lenient date-times', () => {
    const params = { type: 'dict', properties: { id: { type: 'int' }, at: { type: 'string', format: 'date-time' }, when: { type: 'string', format: 'HH:mm' } }, required: ['id'] };
    expect(validator.validate(params, { id: 3, at: '2023-08-01 10:00', when: 'noon' })).toEqual([]);
    expect(validator.validate(params, { id: '3' })[0]!.message).toBe('must be integer');
    expect(normaliseSchema(params)).toEqual({ type: 'object', properties: { id: { type: 'integer' }, at: { type: 'string', format: 'date-time' }, when: { type: 'string' } }, required: ['id'] });
  });
});
