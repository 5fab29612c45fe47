// The reader moved to core (the NesTools scorer reads Python literals too); MTU modules import it from here.
export { parsePythonLiteral, readPythonLiteral } from '../../core/python-literal.ts';
