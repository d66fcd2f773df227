import { describe, expect, it } from 'vitest';
import type { CloudFormationTemplate } from '../../../infra/dev/local/template/cloudformation-template.ts';
import {
  deploymentOrder,
  importDependencies,
  importedNames,
} from '../../../infra/dev/local/template/stack-order.ts';

const stack = (stackName: string, dependencies: string[] = []) => ({ stackName, dependencies });

describe('deploymentOrder', () => {
  it('puts each stack after the stacks it depends on, and otherwise keeps the order given', () => {
    const order = deploymentOrder([
      stack('Loyalty', ['Orders']),
      stack('Orders'),
      stack('Inventory', ['Orders', 'Elsewhere']),
      stack('Audit'),
    ]);
    expect(order.map((entry) => entry.stackName)).toEqual(['Orders', 'Loyalty', 'Inventory', 'Audit']);
  });

  it('refuses stacks that depend on each other in a cycle, naming the cycle', () => {
    expect(() => deploymentOrder([stack('A', ['B']), stack('B', ['C']), stack('C', ['A'])])).toThrow(
      expect.objectContaining({
        code: 'SYNTH_FAILED',
        message: "the app's stacks depend on each other in a cycle: A → B → C → A",
      }),
    );
  });
});

describe('importDependencies', () => {
  const exporting: CloudFormationTemplate = {
    Resources: {},
    Outputs: {
      table: { Value: { Ref: 'Table' }, Export: { Name: 'Orders:Table' } },
      plain: { Value: 'not exported' },
    },
  };
  const importing: CloudFormationTemplate = {
    Resources: {
      Fn: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          Environment: {
            Variables: {
              TABLE: { 'Fn::ImportValue': 'Orders:Table' },
              AGAIN: { 'Fn::Join': ['', [{ 'Fn::ImportValue': 'Orders:Table' }]] },
              OTHER: { 'Fn::ImportValue': 'Somewhere:Else' },
            },
          },
        },
      },
    },
  };

  it('finds which stack exports what another imports', () => {
    expect(importedNames(importing)).toEqual(['Orders:Table', 'Somewhere:Else']);
    expect(
      importDependencies([
        { stackName: 'Inventory', template: importing },
        { stackName: 'Orders', template: exporting },
      ]),
    ).toEqual(
      new Map([
        ['Inventory', ['Orders']],
        ['Orders', []],
      ]),
    );
  });
});
