"""The hand-written CPU version of ../project/gan/gan.py."""

import torch

torch.manual_seed(2)
generator = torch.nn.Linear(3, 5)
critic = torch.nn.Linear(5, 1)
generator_optimizer = torch.optim.RMSprop(generator.parameters(), lr=0.01)
critic_optimizer = torch.optim.Adadelta(critic.parameters())
real = torch.randn(32, 5) + 1.0
for step in range(20):
    fake = generator(torch.randn(32, 3))
    critic_loss = critic(fake.detach()).mean() - critic(real).mean()
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    generator_loss = -critic(generator(torch.randn(32, 3))).mean()
    generator_optimizer.zero_grad()
    generator_loss.backward()
    generator_optimizer.step()
    if step % 5 == 4:
        print(f"step {step} loss {generator_loss.item():.8f} {critic_loss.item():.8f}")
